package io.falkon.dispatcher;

import io.falkon.dispatcher.core.Clock;
import io.falkon.dispatcher.policy.DispatchPolicy;
import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.protocol.Protocol;

import java.util.Objects;

/** How to run a {@link Dispatcher}. Immutable; start from {@link #defaults()}. */
public record DispatcherConfig(String bindHost, int port, int ioThreads, int maxFrameLength, long heartbeatMillis,
                               String token, DispatchPolicy policy, Clock clock) {

    public DispatcherConfig {
        Objects.requireNonNull(bindHost, "bindHost");
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(clock, "clock");
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " is out of range 0..65535");
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
    }

    /**
     * All interfaces, port {@value Protocol#DEFAULT_PORT}, one I/O thread per core, 16 MiB frames,
     * heartbeats every 5 s, no token, first-available.
     */
    public static DispatcherConfig defaults() {
        return new DispatcherConfig("0.0.0.0", Protocol.DEFAULT_PORT, Runtime.getRuntime().availableProcessors(),
                Protocol.DEFAULT_MAX_FRAME_LENGTH, 5000, "", new FirstAvailable(), Clock.SYSTEM);
    }

    /** Loopback only, an ephemeral port: for embedded use and tests. */
    public static DispatcherConfig local() {
        return defaults().withBindHost("127.0.0.1").withPort(0);
    }

    public DispatcherConfig withBindHost(String host) {
        return new DispatcherConfig(host, port, ioThreads, maxFrameLength, heartbeatMillis, token, policy, clock);
    }

    public DispatcherConfig withPort(int p) {
        return new DispatcherConfig(bindHost, p, ioThreads, maxFrameLength, heartbeatMillis, token, policy, clock);
    }

    public DispatcherConfig withIoThreads(int n) {
        return new DispatcherConfig(bindHost, port, n, maxFrameLength, heartbeatMillis, token, policy, clock);
    }

    public DispatcherConfig withMaxFrameLength(int n) {
        return new DispatcherConfig(bindHost, port, ioThreads, n, heartbeatMillis, token, policy, clock);
    }

    public DispatcherConfig withHeartbeatMillis(long ms) {
        return new DispatcherConfig(bindHost, port, ioThreads, maxFrameLength, ms, token, policy, clock);
    }

    public DispatcherConfig withToken(String t) {
        return new DispatcherConfig(bindHost, port, ioThreads, maxFrameLength, heartbeatMillis, t, policy, clock);
    }

    public DispatcherConfig withPolicy(DispatchPolicy p) {
        return new DispatcherConfig(bindHost, port, ioThreads, maxFrameLength, heartbeatMillis, token, p, clock);
    }

    public DispatcherConfig withClock(Clock c) {
        return new DispatcherConfig(bindHost, port, ioThreads, maxFrameLength, heartbeatMillis, token, policy, c);
    }
}
