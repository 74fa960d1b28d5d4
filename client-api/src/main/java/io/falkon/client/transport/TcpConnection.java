package io.falkon.client.transport;

import io.falkon.client.ConnectionLostException;
import io.falkon.client.FalkonException;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Message;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.netty.Frames;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The TCP transport: one Netty channel on one I/O thread. Requests carry a request id and are
 * matched to their replies; DELIVER frames are routed to the instance's {@link ResultSink}.
 * Outgoing messages from any thread are queued and written by the I/O thread with one flush per
 * drain, so many small submissions cost one system call.
 *
 * <p>If the connection breaks, requests in flight fail with {@link ConnectionLostException}; the
 * connection dials again with exponential back-off for up to {@code reconnectFor}, then tells each
 * sink {@link ResultSink#reconnected()} so that instances re-attach. Messages sent meanwhile wait
 * for the new connection. When reconnecting fails (or is disabled) every sink hears
 * {@link ResultSink#connectionLost}.
 */
public final class TcpConnection implements Connection {
    private static final Logger log = LoggerFactory.getLogger(TcpConnection.class);
    private static final long HEARTBEAT_MILLIS = 5000;
    private static final long DEAD_AFTER_MILLIS = 3 * HEARTBEAT_MILLIS;
    private static final long BACKOFF_FIRST_MILLIS = 100;
    private static final long BACKOFF_MAX_MILLIS = 2000;

    private final EventLoopGroup group;
    private final EventLoop loop;
    private final Bootstrap bootstrap;
    private final InetSocketAddress remote;
    private final String address;
    private final String token;
    private final Duration reconnectFor;
    private final AtomicLong requestIds = new AtomicLong();
    private final Map<Long, CompletableFuture<Message>> requests = new ConcurrentHashMap<>();
    private final Map<Long, ResultSink> sinks = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Message> outgoing = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    /** The connection ready for requests (handshake done), or null while (re)connecting. */
    private volatile Channel ready;
    private volatile Throwable failure;
    private volatile boolean closed;
    private long disconnectedAtNanos;
    private int attempt;

    private TcpConnection(String host, int port, String token, Duration connectTimeout, Duration reconnectFor) {
        this.group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("falkon-client", true),
                NioIoHandler.newFactory());
        this.loop = group.next();
        this.remote = new InetSocketAddress(host, port);
        this.address = host + ":" + port;
        this.token = token;
        this.reconnectFor = reconnectFor;
        this.bootstrap = new Bootstrap().group(loop).channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, connectTimeout.toMillis()))
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new IdleStateHandler(DEAD_AFTER_MILLIS, HEARTBEAT_MILLIS, 0,
                                TimeUnit.MILLISECONDS));
                        Frames.install(ch.pipeline(), Protocol.DEFAULT_MAX_FRAME_LENGTH);
                        ch.pipeline().addLast(new Handler());
                    }
                });
    }

    /**
     * Connects and completes the handshake.
     *
     * @param reconnectFor how long to keep dialling after the connection breaks (zero: give up at once)
     * @throws FalkonException if the dispatcher cannot be reached or refuses the handshake
     */
    public static TcpConnection connect(String host, int port, String token, Duration timeout, Duration reconnectFor) {
        TcpConnection conn = new TcpConnection(host, port, token, timeout, reconnectFor);
        ChannelFuture cf = conn.bootstrap.connect(conn.remote).awaitUninterruptibly();
        if (!cf.isSuccess()) {
            conn.group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            Throwable c = cf.cause();
            throw new FalkonException("cannot connect to dispatcher at " + conn.address + ": "
                    + (c == null ? "timed out" : c.getMessage()), c);
        }
        Handler h = cf.channel().pipeline().get(Handler.class);
        cf.channel().writeAndFlush(hello(token));
        try {
            h.welcome.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            conn.close();
            throw new FalkonException("interrupted while connecting to " + conn.address, e);
        } catch (ExecutionException | TimeoutException e) {
            conn.close();
            Throwable c = e instanceof ExecutionException ? e.getCause() : e;
            if (c instanceof FalkonException fe) {
                throw fe;
            }
            throw new FalkonException("no handshake from dispatcher at " + conn.address + ": " + c, c);
        }
        return conn;
    }

    private static Message hello(String token) {
        return Message.Hello.of(Protocol.ROLE_CLIENT, token, "falkon-java-client/" + Protocol.VERSION);
    }

    /** Queues a message for the I/O thread, which writes everything queued with one flush. */
    private void send(Message m) {
        outgoing.add(m);
        if (drainScheduled.compareAndSet(false, true)) {
            loop.execute(this::drain);
        }
    }

    private void drain() {
        drainScheduled.set(false);
        Channel ch = ready;
        if (ch == null) {
            return; // reconnecting: the queue waits for the next connection
        }
        Message m;
        boolean wrote = false;
        while ((m = outgoing.poll()) != null) {
            ch.write(m, ch.voidPromise());
            wrote = true;
        }
        if (wrote) {
            ch.flush();
        }
    }

    private CompletableFuture<Message> request(java.util.function.LongFunction<Message> build) {
        CompletableFuture<Message> f = new CompletableFuture<>();
        Throwable failed = failure;
        if (failed != null) {
            f.completeExceptionally(lost(failed));
            return f;
        }
        long id;
        do {
            id = requestIds.incrementAndGet() & 0xFFFF_FFFFL;
        } while (id == 0);
        requests.put(id, f);
        send(build.apply(id));
        if (failure != null && requests.remove(id) != null) {
            f.completeExceptionally(lost(failure));
        }
        return f;
    }

    private FalkonException lost(Throwable cause) {
        return cause instanceof FalkonException fe ? fe
                : new ConnectionLostException("connection to dispatcher at " + address + " lost", cause);
    }

    @Override
    public CompletableFuture<Long> createInstance(String clientName, long leaseSeconds) {
        return request(id -> new Message.CreateInstance(id, clientName, leaseSeconds))
                .thenApply(m -> ((Message.InstanceCreated) m).instanceId());
    }

    @Override
    public CompletableFuture<Integer> submit(long instanceId, List<Message.SubmittedTask> bundle) {
        return request(id -> new Message.Submit(id, instanceId, bundle))
                .thenApply(m -> ((Message.Submitted) m).accepted());
    }

    @Override
    public CompletableFuture<String> status(long instanceId) {
        return request(id -> new Message.StatusRequest(id, instanceId)).thenApply(m -> ((Message.Status) m).json());
    }

    @Override
    public CompletableFuture<Integer> destroy(long instanceId) {
        return request(id -> new Message.Destroy(id, instanceId)).thenApply(m -> ((Message.Destroyed) m).cancelled());
    }

    @Override
    public CompletableFuture<Message.Attached> attach(long instanceId) {
        return request(id -> new Message.Attach(id, instanceId)).thenApply(m -> (Message.Attached) m);
    }

    @Override
    public void ack(long instanceId, long upToSeq) {
        send(new Message.Ack(instanceId, upToSeq));
    }

    @Override
    public void attach(long instanceId, ResultSink sink) {
        sinks.put(instanceId, sink);
    }

    @Override
    public void detach(long instanceId) {
        sinks.remove(instanceId);
    }

    @Override
    public Executor executor() {
        return loop;
    }

    @Override
    public boolean connected() {
        return ready != null && failure == null && !closed;
    }

    @Override
    public String address() {
        return address;
    }

    @Override
    public void close() {
        closed = true;
        Channel ch = ready;
        if (ch != null) {
            ch.close().awaitUninterruptibly();
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        if (failure == null) {
            failAll(new FalkonException(null, "connection closed"));
        }
    }

    private void replied(long requestId, Message m) {
        CompletableFuture<Message> f = requests.remove(requestId);
        if (f == null) {
            log.warn("reply to unknown request {} from {}: {}", requestId, address, m.type());
            return;
        }
        if (m instanceof Message.ErrorMessage e) {
            f.completeExceptionally(new FalkonException(e.errorCode(), e.message()));
        } else {
            f.complete(m);
        }
    }

    /** Fails what waits for a reply on the connection that broke; those requests may have been lost. */
    private void failRequests(Throwable cause) {
        for (Long id : requests.keySet()) {
            CompletableFuture<Message> f = requests.remove(id);
            if (f != null) {
                f.completeExceptionally(lost(cause));
            }
        }
    }

    /** For good: every sink and every request fails. */
    private void failAll(Throwable cause) {
        if (failure == null) {
            failure = cause;
        }
        // sinks first: an instance must know it is lost before any of its futures fails
        for (ResultSink sink : sinks.values()) {
            sink.connectionLost(lost(cause));
        }
        failRequests(cause);
        outgoing.clear();
    }

    /** On the I/O thread: the ready connection broke. */
    private void broke(String why) {
        ready = null;
        if (closed || failure != null) {
            return;
        }
        if (reconnectFor.isZero()) {
            failAll(new ConnectionLostException("connection to dispatcher at " + address + " " + why, null));
            return;
        }
        failRequests(new ConnectionLostException("connection to dispatcher at " + address + " " + why
                + "; reconnecting", null));
        if (disconnectedAtNanos == 0) {
            disconnectedAtNanos = System.nanoTime();
            attempt = 0;
            log.warn("connection to dispatcher at {} {}; reconnecting for up to {} s", address, why,
                    reconnectFor.toSeconds());
        }
        scheduleReconnect();
    }

    private void scheduleReconnect() {
        if (closed) {
            return;
        }
        if (System.nanoTime() - disconnectedAtNanos > reconnectFor.toNanos()) {
            log.error("no dispatcher at {} for {} s; giving up", address, reconnectFor.toSeconds());
            failAll(new ConnectionLostException("connection to dispatcher at " + address + " lost; no dispatcher "
                    + "there for " + reconnectFor.toSeconds() + " s", null));
            return;
        }
        long base = Math.min(BACKOFF_MAX_MILLIS, BACKOFF_FIRST_MILLIS << Math.min(attempt++, 10));
        long delay = base / 2 + ThreadLocalRandom.current().nextLong(base / 2 + 1);
        loop.schedule(() -> {
            if (closed) {
                return;
            }
            bootstrap.connect(remote).addListener((ChannelFuture f) -> {
                if (f.isSuccess()) {
                    f.channel().writeAndFlush(hello(token));
                } else {
                    scheduleReconnect();
                }
            });
        }, delay, TimeUnit.MILLISECONDS);
    }

    /** On the I/O thread: a (re)connection completed its handshake. */
    private void welcomed(Channel ch) {
        boolean again = disconnectedAtNanos != 0;
        ready = ch;
        if (again) {
            log.info("reconnected to dispatcher at {} after {} ms", address,
                    (System.nanoTime() - disconnectedAtNanos) / 1_000_000);
            disconnectedAtNanos = 0;
            for (ResultSink sink : sinks.values()) {
                sink.reconnected();
            }
        }
        drain();
    }

    private final class Handler extends SimpleChannelInboundHandler<Message> {
        final CompletableFuture<Message.Welcome> welcome = new CompletableFuture<>();
        private boolean welcomed;

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Message m) {
            switch (m.type()) {
                case DELIVER -> {
                    Message.Deliver d = (Message.Deliver) m;
                    ResultSink sink = sinks.get(d.instanceId());
                    if (sink != null) {
                        sink.deliver(d.results());
                    }
                }
                case SUBMITTED -> replied(((Message.Submitted) m).requestId(), m);
                case INSTANCE_CREATED -> replied(((Message.InstanceCreated) m).requestId(), m);
                case STATUS -> replied(((Message.Status) m).requestId(), m);
                case DESTROYED -> replied(((Message.Destroyed) m).requestId(), m);
                case ATTACHED -> replied(((Message.Attached) m).requestId(), m);
                case WELCOME -> {
                    welcomed = true;
                    welcome.complete((Message.Welcome) m);
                    welcomed(ctx.channel());
                }
                case HEARTBEAT -> {
                }
                case ERROR -> {
                    Message.ErrorMessage e = (Message.ErrorMessage) m;
                    if (e.requestId() != 0) {
                        replied(e.requestId(), m);
                    } else {
                        log.error("dispatcher at {} closed the connection: {} {}", address, e.errorCode(), e.message());
                        FalkonException refused = new FalkonException(e.errorCode(), "dispatcher at " + address
                                + " refused the connection: " + e.message());
                        welcome.completeExceptionally(refused);
                        if (e.errorCode() == ErrorCode.UNAUTHORIZED || e.errorCode() == ErrorCode.UNSUPPORTED_VERSION) {
                            failAll(refused); // trying again cannot help
                        }
                    }
                }
                default -> {
                    log.error("unexpected {} from dispatcher at {}; closing", m.type(), address);
                    ctx.close();
                }
            }
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            if (evt instanceof IdleStateEvent idle) {
                if (idle.state() == IdleState.READER_IDLE) {
                    log.warn("nothing from dispatcher at {} for {} ms", address, DEAD_AFTER_MILLIS);
                    ctx.close();
                } else {
                    ctx.writeAndFlush(new Message.Heartbeat(System.currentTimeMillis() * 1000), ctx.voidPromise());
                }
                return;
            }
            super.userEventTriggered(ctx, evt);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            welcome.completeExceptionally(new ConnectionLostException("connection to dispatcher at " + address
                    + " closed during the handshake", null));
            if (welcomed) {
                broke("closed");
            } else if (disconnectedAtNanos != 0) {
                scheduleReconnect(); // a reconnection attempt that did not make it through the handshake
            }
            super.channelInactive(ctx);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            log.warn("connection to dispatcher at {} failed: {}", address, cause.toString());
            ctx.close();
        }
    }
}
