package io.falkon.protocol.session;

import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Message;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.netty.Frames;
import io.falkon.protocol.time.Clock;
import io.falkon.protocol.tls.Tls;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;

/**
 * A peer's connection to the dispatcher, the same for the Java executor and the Java client: dial
 * (over TLS when configured), {@code HELLO} with the token, wait for {@code WELCOME}, then keep the
 * heartbeat the dispatcher announced in it ({@code heartbeatMillis}: send one after that long
 * without writing, drop the connection after three intervals without reading; 0 = no heartbeats
 * either way). When the connection breaks, dial again with one {@link Backoff} for up to
 * {@code reconnectFor}. Each connection has a generation number, so the owner can tell what
 * belongs to a connection that is gone.
 *
 * <p>Everything here, and every {@link Listener} call, happens on the session's event loop.
 */
public final class PeerSession {
    private static final Logger log = LoggerFactory.getLogger(PeerSession.class);

    /** What the owner hears, on the event loop. */
    public interface Listener {
        /** A (re)connection completed its handshake; {@code again} is false for the first one. */
        void welcomed(Channel channel, Message.Welcome welcome, boolean again);

        /** A message other than the handshake, heartbeats and connection-level errors. */
        void received(Message m);

        /** The ready connection broke; the session is dialling again (until {@link #gaveUp}). */
        void lost(String why);

        /** The dispatcher refused or dropped us with a protocol error that trying again cannot fix. */
        void refused(Message.ErrorMessage error);

        /** The session stopped for good: no dispatcher for {@code reconnectFor}, or reconnecting is off. */
        void gaveUp(String why);
    }

    /**
     * @param role         {@link Protocol#ROLE_EXECUTOR} or {@link Protocol#ROLE_CLIENT}
     * @param reconnectFor how long to keep dialling after the connection breaks (zero: give up at once)
     * @param tls          TLS to the dispatcher, or null
     * @param awaitFirstFor how long the first dial may go on while nothing listens at the address
     *                     (an executor started beside its dispatcher, before it listens); zero: the
     *                     first failure is the end (a client the user waits for)
     */
    public record Config(String host, int port, int role, Token token, String agent, Tls tls,
                         Duration connectTimeout, Duration reconnectFor, Backoff backoff, Duration awaitFirstFor) {
    }

    private final Config config;
    private final EventLoop loop;
    private final Listener listener;
    private final Bootstrap bootstrap;
    private final CompletableFuture<Message.Welcome> first = new CompletableFuture<>();
    /** The connection ready for messages (handshake done), or null while (re)connecting. */
    private volatile Channel ready;
    private volatile int generation;
    private volatile boolean closed;
    private boolean stopped;
    private long heartbeatMillis;
    /** While {@link #away}: when the connection broke (or the first dial failed), on the clock's monotonic tick. */
    private long disconnectedAtMicros;
    private boolean away;
    private final Clock clock;
    private int attempt;
    /** Why the last dial failed, while the first connection is awaited. */
    private String lastFailure;

    public PeerSession(Config config, EventLoop loop, Listener listener) {
        this(config, loop, listener, Clock.SYSTEM);
    }

    /** With the clock that times how long the dispatcher has been away (a fake one in tests). */
    public PeerSession(Config config, EventLoop loop, Listener listener, Clock clock) {
        this.clock = clock;
        this.config = config;
        this.loop = loop;
        this.listener = listener;
        this.bootstrap = new Bootstrap().group(loop).channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS,
                        (int) Math.min(Integer.MAX_VALUE, config.connectTimeout().toMillis()))
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (config.tls() != null) {
                            ch.pipeline().addLast("tls", config.tls().clientHandler(ch.alloc(), config.host(),
                                    config.port()));
                        }
                        Frames.install(ch.pipeline(), Protocol.DEFAULT_MAX_FRAME_LENGTH);
                        ch.pipeline().addLast("session", new Handler(++generation));
                    }
                });
    }

    /** Where the dispatcher is, for messages. */
    public String address() {
        return config.host() + ":" + config.port();
    }

    /**
     * Dials and completes the first handshake; the future fails if the dispatcher cannot be reached
     * or refuses. Later connections happen by themselves.
     */
    public CompletableFuture<Message.Welcome> start() {
        dial(true);
        return first;
    }

    /** The connection ready for messages, or null while (re)connecting or after the end. */
    public Channel channel() {
        return ready;
    }

    /** Counts connections: anything tied to an older generation belongs to a connection that is gone. */
    public int generation() {
        return generation;
    }

    /** The heartbeat interval the dispatcher announced (0: off). */
    public long heartbeatMillis() {
        return heartbeatMillis;
    }

    public EventLoop eventLoop() {
        return loop;
    }

    private void dial(boolean firstTime) {
        bootstrap.connect(new InetSocketAddress(config.host(), config.port())).addListener((ChannelFuture f) -> {
            if (f.isSuccess()) {
                f.channel().writeAndFlush(Message.Hello.of(config.role(), config.token().value(), config.agent()));
                // the handshake must complete in time, whatever heartbeats will be agreed
                ScheduledFuture<?> timeout = loop.schedule(() -> {
                    if (ready != f.channel() && f.channel().isActive()) {
                        log.warn("no WELCOME from {} within {} ms", address(), config.connectTimeout().toMillis());
                        f.channel().close();
                    }
                }, config.connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
                f.channel().closeFuture().addListener(x -> timeout.cancel(false));
            } else if (!first.isDone()) {
                Throwable c = f.cause();
                String why = reason(c);
                if (config.awaitFirstFor().isZero()) {
                    first.completeExceptionally(new IllegalStateException("cannot connect to dispatcher at "
                            + address() + ": " + why, c));
                    return;
                }
                if (firstTime) {
                    // a batch script may start the dispatcher and its executors together
                    log.warn("no dispatcher at {} yet ({}); dialling again for up to {} s", address(), why,
                            config.awaitFirstFor().toSeconds());
                    disconnectedAtMicros = clock.tickMicros();
                    away = true;
                    attempt = 0;
                }
                lastFailure = why;
                scheduleReconnect();
            } else {
                scheduleReconnect();
            }
        });
    }

    /** Why a dial failed, in words: an unknown host says so (its exception's message is the bare name). */
    static String reason(Throwable c) {
        if (c == null) {
            return "timed out";
        }
        for (Throwable t = c; t != null; t = t.getCause()) {
            if (t instanceof java.net.UnknownHostException) {
                return "unknown host '" + t.getMessage() + "' (no address found for the name)";
            }
        }
        return c.getMessage();
    }

    private void scheduleReconnect() {
        if (closed || stopped) {
            return;
        }
        Duration limit = first.isDone() ? config.reconnectFor() : config.awaitFirstFor();
        if (clock.tickMicros() - disconnectedAtMicros > limit.toNanos() / 1000) {
            stop(first.isDone() ? "no dispatcher at " + address() + " for " + limit.toSeconds() + " s"
                    : "cannot connect to dispatcher at " + address() + " within " + limit.toSeconds() + " s: "
                    + lastFailure);
            return;
        }
        long delay = config.backoff().delayMillis(attempt++);
        loop.schedule(() -> {
            if (!closed && !stopped) {
                dial(false);
            }
        }, delay, TimeUnit.MILLISECONDS);
    }

    private void stop(String why) {
        if (stopped) {
            return;
        }
        stopped = true;
        ready = null;
        first.completeExceptionally(new IllegalStateException(why));
        listener.gaveUp(why);
    }

    /** The ready connection broke (or the handshake failed on a reconnection). */
    private void broke(String why, boolean wasReady) {
        ready = null;
        if (closed || stopped) {
            return;
        }
        if (!first.isDone()) {
            first.completeExceptionally(new IllegalStateException("connection to dispatcher at " + address() + " "
                    + why + " during the handshake"));
            return;
        }
        if (config.reconnectFor().isZero()) {
            stop("the connection to the dispatcher at " + address() + " " + why);
            return;
        }
        if (wasReady) {
            disconnectedAtMicros = clock.tickMicros();
            away = true;
            attempt = 0;
            log.warn("connection to dispatcher at {} {}; reconnecting for up to {} s", address(), why,
                    config.reconnectFor().toSeconds());
            listener.lost(why);
        }
        scheduleReconnect();
    }

    /** Closes the connection for good (no reconnecting). */
    public void close() {
        closed = true;
        Channel ch = ready;
        ready = null;
        if (ch != null) {
            ch.close().awaitUninterruptibly();
        }
    }


    private final class Handler extends SimpleChannelInboundHandler<Message> {
        private final int connection;
        private boolean welcomed;
        /** Why the TLS handshake failed, if it did: the reason the connection then closes. */
        private String tlsFailure;

        Handler(int connection) {
            this.connection = connection;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Message m) {
            switch (m.type()) {
                case WELCOME -> welcome(ctx, (Message.Welcome) m);
                case HEARTBEAT -> {
                    // reading it is the point
                }
                case ERROR -> {
                    Message.ErrorMessage e = (Message.ErrorMessage) m;
                    if (e.requestId() != 0) {
                        listener.received(m); // a request's answer
                        return;
                    }
                    ErrorCode code = e.errorCode();
                    if (code == ErrorCode.UNAUTHORIZED || code == ErrorCode.UNSUPPORTED_VERSION
                            || code == ErrorCode.SHUTTING_DOWN || code == ErrorCode.DUPLICATE_EXECUTOR) {
                        // on purpose, or not fixable by dialling again
                        first.completeExceptionally(new RefusedException(e));
                        stopped = true;
                        listener.refused(e);
                    } else {
                        log.error("dispatcher at {} closed the connection: {} {}", address(), code, e.message());
                        if (!first.isDone()) {
                            first.completeExceptionally(new RefusedException(e));
                        }
                    }
                }
                default -> {
                    if (welcomed) {
                        listener.received(m);
                    } else {
                        log.warn("{} from {} before WELCOME; closing", m.type(), address());
                        ctx.close();
                    }
                }
            }
        }

        private void welcome(ChannelHandlerContext ctx, Message.Welcome w) {
            if (welcomed) {
                return;
            }
            welcomed = true;
            heartbeatMillis = w.heartbeatMillis();
            if (w.heartbeatMillis() > 0) {
                ctx.pipeline().addBefore("session", "heartbeat", new IdleStateHandler(3 * w.heartbeatMillis(),
                        w.heartbeatMillis(), 0, TimeUnit.MILLISECONDS));
            }
            boolean again = first.isDone();
            if (away) {
                log.info("{} dispatcher at {} after {} ms", again ? "reconnected to" : "connected to the", address(),
                        (clock.tickMicros() - disconnectedAtMicros) / 1000);
            }
            away = false;
            ready = ctx.channel();
            listener.welcomed(ctx.channel(), w, again);
            first.complete(w);
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            if (evt instanceof SslHandshakeCompletionEvent h && !h.isSuccess()) {
                tlsFailure = "failed the TLS handshake (" + tlsMessage(h.cause()) + ")";
            }
            if (evt instanceof IdleStateEvent idle) {
                if (idle.state() == IdleState.READER_IDLE) {
                    log.warn("nothing from dispatcher at {} for {} ms (3 heartbeats)", address(), 3 * heartbeatMillis);
                    ctx.close();
                } else {
                    ctx.writeAndFlush(new Message.Heartbeat(Clock.SYSTEM.nowMicros()), ctx.voidPromise());
                }
                return;
            }
            super.userEventTriggered(ctx, evt);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            if (connection == generation || welcomed) {
                broke(welcomed ? "closed" : tlsFailure != null ? tlsFailure : config.tls() == null
                        ? "closed before WELCOME (not a Falkon port, or one that expects TLS: see --tls-ca)"
                        : "closed before WELCOME", welcomed);
            }
            super.channelInactive(ctx);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (tlsFailure == null) { // a failed TLS handshake is reported once, as the reason it closed
                log.warn("connection to dispatcher at {} failed: {}", address(), cause.toString());
            }
            ctx.close();
        }
    }

    /** The TLS layer's own account of a failure (e.g. "PKIX path validation failed: ..."), else the root cause's. */
    private static String tlsMessage(Throwable t) {
        Throwable root = t;
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof SSLException && c.getMessage() != null) {
                return c.getMessage();
            }
            root = c;
        }
        return root.getMessage() != null ? root.getMessage() : root.toString();
    }

    /** The dispatcher refused the connection with a protocol error. */
    public static final class RefusedException extends IllegalStateException {
        private static final long serialVersionUID = 1L;
        private final transient Message.ErrorMessage error;

        RefusedException(Message.ErrorMessage error) {
            super(error.errorCode() + ": " + error.message());
            this.error = error;
        }

        public Message.ErrorMessage error() {
            return error;
        }
    }
}
