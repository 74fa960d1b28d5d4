package io.falkon.dispatcher;

import io.falkon.dispatcher.core.SchedulerConfig;
import io.falkon.dispatcher.journal.FsyncPolicy;
import io.falkon.transport.monitor.MonitorTransport;
import io.falkon.dispatcher.policy.DispatchPolicy;
import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.transport.ws.WsTransport;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.time.Clock;
import io.falkon.protocol.tls.Tls;

import java.nio.file.Path;
import java.util.Objects;

/**
 * How to run a {@link Dispatcher}. Immutable; start from {@link #defaults()} or {@link #local()} and
 * change what differs with the {@code with...} methods.
 */
public final class DispatcherConfig {
    private final String bindHost;
    private final int port;
    private final int ioThreads;
    private final int maxFrameLength;
    private final long heartbeatMillis;
    private final Token token;
    private final Tls tls;
    private final int maxTaskBytes;
    private final String advertiseHost;
    private final DispatchPolicy policy;
    private final Clock clock;
    private final SchedulerConfig scheduler;
    private final Path journalDir;
    private final FsyncPolicy fsync;
    private final int wsPort;
    private final WsTransport.Settings ws;
    private final int httpPort;
    private final MonitorTransport.Settings http;
    private final Path spillDir;
    private final long maxSpillBytes;

    private DispatcherConfig(Builder b) {
        this.bindHost = Objects.requireNonNull(b.bindHost, "bindHost");
        this.port = b.port;
        this.ioThreads = b.ioThreads;
        this.maxFrameLength = b.maxFrameLength;
        this.heartbeatMillis = b.heartbeatMillis;
        this.token = b.token != null ? b.token : Token.random();
        this.tls = b.tls;
        this.maxTaskBytes = b.maxTaskBytes;
        this.advertiseHost = b.advertiseHost;
        this.policy = Objects.requireNonNull(b.policy, "policy");
        this.clock = Objects.requireNonNull(b.clock, "clock");
        this.scheduler = Objects.requireNonNull(b.scheduler, "scheduler");
        this.journalDir = b.journalDir;
        this.fsync = Objects.requireNonNull(b.fsync, "fsync");
        this.wsPort = b.wsPort;
        this.ws = Objects.requireNonNull(b.ws, "ws");
        this.httpPort = b.httpPort;
        this.http = Objects.requireNonNull(b.http, "http");
        if (httpPort < -1 || httpPort > 65535) {
            throw new IllegalArgumentException("HTTP port " + httpPort + " is out of range 0..65535");
        }
        this.spillDir = b.spillDir;
        this.maxSpillBytes = b.maxSpillBytes;
        if (maxSpillBytes < 0) {
            throw new IllegalArgumentException("the result spill's size must not be negative");
        }
        if (wsPort < -1 || wsPort > 65535) {
            throw new IllegalArgumentException("WS port " + wsPort + " is out of range 0..65535");
        }
        if (port < -1 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " is out of range 0..65535 (-1: no TCP listener)");
        }
        if (ioThreads < 1) {
            throw new IllegalArgumentException("ioThreads must be at least 1");
        }
        if (maxFrameLength < 1024) {
            throw new IllegalArgumentException("maxFrameLength must be at least 1024 bytes");
        }
        if (heartbeatMillis < 0) {
            throw new IllegalArgumentException("heartbeatMillis must not be negative");
        }
        if (maxTaskBytes < 256 || maxTaskBytes > maxFrameLength - 4096) {
            throw new IllegalArgumentException("the largest task (" + maxTaskBytes + " bytes) must be 256 bytes to "
                    + "the frame limit less 4 KiB (" + (maxFrameLength - 4096) + ")");
        }
    }

    /**
     * All interfaces, port {@value Protocol#DEFAULT_PORT}, one I/O thread per core, 16 MiB frames, tasks
     * up to 1 MiB, heartbeats every 5 s, a new random token (callers must present it; see
     * {@link Dispatcher#token()}), no TLS, first-available, {@link SchedulerConfig#defaults()}, no journal.
     */
    public static DispatcherConfig defaults() {
        return new Builder().build();
    }

    /** Loopback only, an ephemeral port, a new random token: for embedded use and tests. */
    public static DispatcherConfig local() {
        return defaults().withBindHost("127.0.0.1").withPort(0);
    }

    public String bindHost() {
        return bindHost;
    }

    public int port() {
        return port;
    }

    public int ioThreads() {
        return ioThreads;
    }

    public int maxFrameLength() {
        return maxFrameLength;
    }

    public long heartbeatMillis() {
        return heartbeatMillis;
    }

    /** What callers must present ({@link Token#none()}: nothing, authentication off). */
    public Token token() {
        return token;
    }

    /** TLS on the TCP port and the WS interface, or null for plain text. */
    public Tls tls() {
        return tls;
    }

    /** The largest encoded task spec accepted, over TCP and WS alike. */
    public int maxTaskBytes() {
        return maxTaskBytes;
    }

    /** The host name put in addresses the dispatcher hands out (WSDL, instance references); null: the bind host. */
    public String advertiseHost() {
        return advertiseHost;
    }

    public DispatchPolicy policy() {
        return policy;
    }

    public Clock clock() {
        return clock;
    }

    public SchedulerConfig scheduler() {
        return scheduler;
    }

    /** The journal directory, or {@code null} for none. */
    public Path journalDir() {
        return journalDir;
    }

    public FsyncPolicy fsync() {
        return fsync;
    }

    public DispatcherConfig withBindHost(String host) {
        return toBuilder().bindHost(host).build();
    }

    public DispatcherConfig withPort(int p) {
        return toBuilder().port(p).build();
    }

    public DispatcherConfig withIoThreads(int n) {
        return toBuilder().ioThreads(n).build();
    }

    public DispatcherConfig withMaxFrameLength(int n) {
        return toBuilder().maxFrameLength(n).build();
    }

    public DispatcherConfig withHeartbeatMillis(long ms) {
        return toBuilder().heartbeatMillis(ms).build();
    }

    /** Requires {@code t} from every caller. */
    public DispatcherConfig withToken(String t) {
        return toBuilder().token(Token.of(t)).build();
    }

    public DispatcherConfig withToken(Token t) {
        return toBuilder().token(t).build();
    }

    /** Turns authentication off: anyone who reaches the ports can run commands. For closed networks only. */
    public DispatcherConfig withoutAuthentication() {
        return toBuilder().token(Token.none()).build();
    }

    public DispatcherConfig withTls(Tls t) {
        return toBuilder().tls(t).build();
    }

    public DispatcherConfig withMaxTaskBytes(int n) {
        return toBuilder().maxTaskBytes(n).build();
    }

    public DispatcherConfig withAdvertiseHost(String host) {
        return toBuilder().advertiseHost(host).build();
    }

    public DispatcherConfig withPolicy(DispatchPolicy p) {
        return toBuilder().policy(p).build();
    }

    public DispatcherConfig withClock(Clock c) {
        return toBuilder().clock(c).build();
    }

    public DispatcherConfig withScheduler(SchedulerConfig s) {
        return toBuilder().scheduler(s).build();
    }

    /** Journal to {@code dir} ({@code null}: no journal) with the given fsync policy. */
    public DispatcherConfig withJournal(Path dir, FsyncPolicy policy) {
        return toBuilder().journal(dir, policy).build();
    }

    /** The Web Services interface's port: -1 when it is off (the default), 0 for any free port. */
    public int wsPort() {
        return wsPort;
    }

    public WsTransport.Settings ws() {
        return ws;
    }

    /** Serves the Web Services interface on {@code port} (0: any free port; -1: off). */
    public DispatcherConfig withWs(int port, WsTransport.Settings settings) {
        return toBuilder().ws(port, settings).build();
    }

    /** The monitoring port (dashboard, /metrics): -1 when it is off (the default), 0 for any free port. */
    public int httpPort() {
        return httpPort;
    }

    public MonitorTransport.Settings http() {
        return http;
    }

    /** Serves the dashboard and /metrics on {@code port} (0: any free port; -1: off). */
    public DispatcherConfig withHttp(int port) {
        return toBuilder().http(port, http).build();
    }

    /**
     * Where results awaiting acknowledgement go beyond their share of the memory budget: null for the
     * default, {@code JOURNAL/spill} with a journal, else {@code $FALKON_HOME/spill/DISPATCHER-ID}.
     */
    public Path spillDir() {
        return spillDir;
    }

    /** The most bytes the result spill keeps on disk (0: no spill, results stay in memory). */
    public long maxSpillBytes() {
        return maxSpillBytes;
    }

    /** Spills results to {@code dir} (null: the default place), at most {@code maxBytes} (0: never). */
    public DispatcherConfig withSpill(Path dir, long maxBytes) {
        return toBuilder().spill(dir, maxBytes).build();
    }

    public Builder toBuilder() {
        return new Builder().bindHost(bindHost).port(port).ioThreads(ioThreads).maxFrameLength(maxFrameLength)
                .heartbeatMillis(heartbeatMillis).token(token).policy(policy).clock(clock).scheduler(scheduler)
                .journal(journalDir, fsync).ws(wsPort, ws).http(httpPort, http).tls(tls).maxTaskBytes(maxTaskBytes)
                .advertiseHost(advertiseHost).spill(spillDir, maxSpillBytes);
    }

    /** Builds a {@link DispatcherConfig}; starts from the defaults. */
    public static final class Builder {
        private String bindHost = "0.0.0.0";
        private int port = Protocol.DEFAULT_PORT;
        private int ioThreads = Runtime.getRuntime().availableProcessors();
        private int maxFrameLength = Protocol.DEFAULT_MAX_FRAME_LENGTH;
        private long heartbeatMillis = 5000;
        /** Null: a new random one, made when the config is built (not for every builder). */
        private Token token;
        private Tls tls;
        private int maxTaskBytes = 1 << 20;
        private String advertiseHost;
        private DispatchPolicy policy = new FirstAvailable();
        private Clock clock = Clock.SYSTEM;
        private SchedulerConfig scheduler = SchedulerConfig.defaults();
        private Path journalDir;
        private FsyncPolicy fsync = FsyncPolicy.BATCH;
        private int wsPort = -1;
        private WsTransport.Settings ws = WsTransport.Settings.defaults();
        private int httpPort = -1;
        private MonitorTransport.Settings http = MonitorTransport.Settings.defaults();
        private Path spillDir;
        private long maxSpillBytes = 16L << 30;

        public Builder bindHost(String v) {
            bindHost = v;
            return this;
        }

        public Builder port(int v) {
            port = v;
            return this;
        }

        public Builder ioThreads(int v) {
            ioThreads = v;
            return this;
        }

        public Builder maxFrameLength(int v) {
            maxFrameLength = v;
            return this;
        }

        public Builder heartbeatMillis(long v) {
            heartbeatMillis = v;
            return this;
        }

        public Builder token(Token v) {
            token = Objects.requireNonNull(v, "token");
            return this;
        }

        public Builder tls(Tls v) {
            tls = v;
            return this;
        }

        public Builder maxTaskBytes(int v) {
            maxTaskBytes = v;
            return this;
        }

        public Builder advertiseHost(String v) {
            advertiseHost = v;
            return this;
        }

        public Builder policy(DispatchPolicy v) {
            policy = v;
            return this;
        }

        public Builder clock(Clock v) {
            clock = v;
            return this;
        }

        public Builder scheduler(SchedulerConfig v) {
            scheduler = v;
            return this;
        }

        public Builder journal(Path dir, FsyncPolicy policy) {
            journalDir = dir;
            fsync = policy;
            return this;
        }

        public Builder ws(int port, WsTransport.Settings settings) {
            wsPort = port;
            ws = settings;
            return this;
        }

        public Builder http(int port, MonitorTransport.Settings settings) {
            httpPort = port;
            http = settings;
            return this;
        }

        public Builder spill(Path dir, long maxBytes) {
            spillDir = dir;
            maxSpillBytes = maxBytes;
            return this;
        }

        public DispatcherConfig build() {
            return new DispatcherConfig(this);
        }
    }
}
