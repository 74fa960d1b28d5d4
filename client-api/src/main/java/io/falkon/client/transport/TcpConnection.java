package io.falkon.client.transport;

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
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The TCP transport: one Netty channel with one I/O thread. Requests carry a request id and are
 * matched to their replies; DELIVER frames are routed to the instance's {@link ResultSink}.
 * Outgoing messages from any thread are queued and written by the I/O thread with one flush per
 * drain, so many small submissions cost one system call.
 */
public final class TcpConnection implements Connection {
    private static final Logger log = LoggerFactory.getLogger(TcpConnection.class);
    private static final long HEARTBEAT_MILLIS = 5000;

    private final EventLoopGroup group;
    private final Channel channel;
    private final String address;
    private final AtomicLong requestIds = new AtomicLong();
    private final Map<Long, CompletableFuture<Message>> requests = new ConcurrentHashMap<>();
    private final Map<Long, ResultSink> sinks = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Message> outgoing = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final CompletableFuture<Message.Welcome> welcome = new CompletableFuture<>();
    private volatile Throwable failure;

    private TcpConnection(EventLoopGroup group, Channel channel, String address) {
        this.group = group;
        this.channel = channel;
        this.address = address;
    }

    /** Connects and completes the handshake. */
    public static TcpConnection connect(String host, int port, String token, Duration timeout) {
        String address = host + ":" + port;
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("falkon-client", true),
                NioIoHandler.newFactory());
        TcpConnection[] self = new TcpConnection[1];
        Bootstrap b = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, timeout.toMillis()))
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new IdleStateHandler(0, HEARTBEAT_MILLIS, 0, TimeUnit.MILLISECONDS));
                        Frames.install(ch.pipeline(), Protocol.DEFAULT_MAX_FRAME_LENGTH);
                        ch.pipeline().addLast(new Handler(() -> self[0]));
                    }
                });
        ChannelFuture cf = b.connect(new InetSocketAddress(host, port)).awaitUninterruptibly();
        if (!cf.isSuccess()) {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            Throwable c = cf.cause();
            throw new FalkonException("cannot connect to dispatcher at " + address + ": "
                    + (c == null ? "timed out" : c.getMessage()), c);
        }
        TcpConnection conn = new TcpConnection(group, cf.channel(), address);
        self[0] = conn;
        conn.send(Message.Hello.of(Protocol.ROLE_CLIENT, token, "falkon-java-client/" + Protocol.VERSION));
        try {
            conn.welcome.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            conn.close();
            throw new FalkonException("interrupted while connecting to " + address, e);
        } catch (ExecutionException | TimeoutException e) {
            conn.close();
            Throwable c = e instanceof ExecutionException ? e.getCause() : e;
            if (c instanceof FalkonException fe) {
                throw fe;
            }
            throw new FalkonException("no handshake from dispatcher at " + address + ": " + c, c);
        }
        return conn;
    }

    /** Queues a message for the I/O thread, which writes everything queued with one flush. */
    private void send(Message m) {
        outgoing.add(m);
        if (drainScheduled.compareAndSet(false, true)) {
            channel.eventLoop().execute(this::drain);
        }
    }

    private void drain() {
        drainScheduled.set(false);
        Message m;
        boolean wrote = false;
        while ((m = outgoing.poll()) != null) {
            channel.write(m, channel.voidPromise());
            wrote = true;
        }
        if (wrote) {
            channel.flush();
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
                : new FalkonException("connection to dispatcher at " + address + " lost", cause);
    }

    @Override
    public CompletableFuture<Long> createInstance(String clientName) {
        return request(id -> new Message.CreateInstance(id, clientName))
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
    public void attach(long instanceId, ResultSink sink) {
        sinks.put(instanceId, sink);
    }

    @Override
    public void detach(long instanceId) {
        sinks.remove(instanceId);
    }

    @Override
    public Executor executor() {
        return channel.eventLoop();
    }

    @Override
    public String address() {
        return address;
    }

    @Override
    public void close() {
        channel.close().awaitUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
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

    private void failAll(Throwable cause) {
        if (failure == null) {
            failure = cause;
        }
        welcome.completeExceptionally(lost(cause));
        // sinks first: an instance must know it is lost before any of its futures fails
        for (ResultSink sink : sinks.values()) {
            sink.connectionLost(lost(cause));
        }
        for (Long id : requests.keySet()) {
            CompletableFuture<Message> f = requests.remove(id);
            if (f != null) {
                f.completeExceptionally(lost(cause));
            }
        }
    }

    private static final class Handler extends SimpleChannelInboundHandler<Message> {
        private final java.util.function.Supplier<TcpConnection> conn;

        Handler(java.util.function.Supplier<TcpConnection> conn) {
            this.conn = conn;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Message m) {
            TcpConnection c = conn.get();
            switch (m.type()) {
                case DELIVER -> {
                    Message.Deliver d = (Message.Deliver) m;
                    ResultSink sink = c.sinks.get(d.instanceId());
                    if (sink != null) {
                        sink.deliver(d.results());
                    }
                }
                case SUBMITTED -> c.replied(((Message.Submitted) m).requestId(), m);
                case INSTANCE_CREATED -> c.replied(((Message.InstanceCreated) m).requestId(), m);
                case STATUS -> c.replied(((Message.Status) m).requestId(), m);
                case DESTROYED -> c.replied(((Message.Destroyed) m).requestId(), m);
                case WELCOME -> c.welcome.complete((Message.Welcome) m);
                case HEARTBEAT -> {
                }
                case ERROR -> {
                    Message.ErrorMessage e = (Message.ErrorMessage) m;
                    if (e.requestId() != 0) {
                        c.replied(e.requestId(), m);
                    } else {
                        log.error("dispatcher at {} closed the connection: {} {}", c.address, e.errorCode(),
                                e.message());
                        c.failAll(new FalkonException(e.errorCode(), "dispatcher at " + c.address
                                + " refused the connection: " + e.message()));
                    }
                }
                default -> {
                    log.error("unexpected {} from dispatcher at {}; closing", m.type(), c.address);
                    ctx.close();
                }
            }
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            if (evt instanceof IdleStateEvent) {
                ctx.writeAndFlush(new Message.Heartbeat(System.currentTimeMillis() * 1000), ctx.voidPromise());
                return;
            }
            super.userEventTriggered(ctx, evt);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            TcpConnection c = conn.get();
            if (c != null) {
                c.failAll(new FalkonException(null, "connection to dispatcher at " + c.address + " closed"));
            }
            super.channelInactive(ctx);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            TcpConnection c = conn.get();
            log.warn("connection to dispatcher at {} failed: {}", c == null ? "?" : c.address, cause.toString());
            ctx.close();
        }
    }
}
