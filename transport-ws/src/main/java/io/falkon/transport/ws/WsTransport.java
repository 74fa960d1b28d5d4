package io.falkon.transport.ws;

import io.falkon.dispatcher.admission.Admission;
import io.falkon.dispatcher.admission.ServerTransport;
import io.falkon.protocol.netty.AcceptedChannels;
import io.falkon.protocol.netty.ConnectionLimit;
import io.falkon.protocol.AdvertisedHost;
import io.falkon.protocol.tls.Tls;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The dispatcher's Web Services interface: the {@code Falkon} SOAP service (SOAP 1.1 and 1.2,
 * document/literal, WSDL at {@code …?wsdl}) over HTTP, or HTTPS with TLS, on its own port. The HTTP
 * server is Netty's: a connection costs a socket, not a thread, so idle, slow and long-polling
 * clients cannot lock anyone out (Axis2's own server gave each connection a thread from a pool of
 * 64). SOAP requests are parsed with Axiom on a small worker pool and answered asynchronously.
 */
public final class WsTransport implements ServerTransport {
    private static final Logger log = LoggerFactory.getLogger(WsTransport.class);
    static final String SERVICE_PATH = "/axis2/services/Falkon";

    /**
     * Limits of the service.
     *
     * @param maxBundle             most tasks one Submit may carry
     * @param defaultLeaseSeconds   lease of an instance created with leaseSeconds 0
     * @param maxLeaseSeconds       longest lease a caller may ask for
     * @param maxWaitSeconds        longest a GetResults call waits
     * @param maxResults            most results one GetResults returns
     * @param maxRequestBytes       largest request body; a longer one is refused before it is read
     * @param maxConnections        connections open at once; more are refused at once
     * @param idleTimeoutSeconds    a connection idle between requests this long is closed
     * @param requestTimeoutSeconds a request must arrive whole within this long
     * @param replyTimeoutSeconds   longest wait for the scheduler's answer
     */
    public record Settings(int maxBundle, long defaultLeaseSeconds, long maxLeaseSeconds, int maxWaitSeconds,
                           int maxResults, int maxRequestBytes, int maxConnections, int idleTimeoutSeconds,
                           int requestTimeoutSeconds, int replyTimeoutSeconds) {
        public Settings {
            if (maxBundle < 1 || maxResults < 1 || maxWaitSeconds < 0 || maxRequestBytes < 1024 || maxConnections < 1
                    || idleTimeoutSeconds < 1 || requestTimeoutSeconds < 1 || replyTimeoutSeconds < 1
                    || defaultLeaseSeconds < 1 || maxLeaseSeconds < defaultLeaseSeconds) {
                throw new IllegalArgumentException("WS settings out of range");
            }
        }

        /**
         * Bundles up to 10,000 tasks, leases of 600 s (at most a week), long-polls up to 60 s, requests up
         * to 32 MiB, 1,024 connections, idle connections closed after 30 s, requests whole within 30 s.
         */
        public static Settings defaults() {
            return new Settings(10_000, 600, 7 * 24 * 3600, 60, 10_000, 32 << 20, 1024, 30, 30, 60);
        }

        public Settings withMaxBundle(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("the maximum bundle must be at least 1, got " + n);
            }
            return new Settings(n, defaultLeaseSeconds, maxLeaseSeconds, maxWaitSeconds, maxResults, maxRequestBytes,
                    maxConnections, idleTimeoutSeconds, requestTimeoutSeconds, replyTimeoutSeconds);
        }

        public Settings withMaxRequestBytes(int n) {
            return new Settings(maxBundle, defaultLeaseSeconds, maxLeaseSeconds, maxWaitSeconds, maxResults, n,
                    maxConnections, idleTimeoutSeconds, requestTimeoutSeconds, replyTimeoutSeconds);
        }

        public Settings withMaxConnections(int n) {
            return new Settings(maxBundle, defaultLeaseSeconds, maxLeaseSeconds, maxWaitSeconds, maxResults,
                    maxRequestBytes, n, idleTimeoutSeconds, requestTimeoutSeconds, replyTimeoutSeconds);
        }

        public Settings withTimeouts(int idleSeconds, int requestSeconds, int replySeconds) {
            return new Settings(maxBundle, defaultLeaseSeconds, maxLeaseSeconds, maxWaitSeconds, maxResults,
                    maxRequestBytes, maxConnections, idleSeconds, requestSeconds, replySeconds);
        }
    }

    private final EventLoopGroup boss;
    private final EventLoopGroup io;
    private final ThreadPoolExecutor workers;
    private final WsGateway gateway;
    private final Channel server;
    private final String url;
    private final AcceptedChannels accepted;
    private volatile boolean closed;

    private WsTransport(EventLoopGroup boss, EventLoopGroup io, ThreadPoolExecutor workers,
                        WsGateway gateway, Channel server, String url, AcceptedChannels accepted) {
        this.accepted = accepted;
        this.boss = boss;
        this.io = io;
        this.workers = workers;
        this.gateway = gateway;
        this.server = server;
        this.url = url;
    }

    /**
     * Starts the service on {@code address} (port 0 picks a free one).
     *
     * @param tls           HTTPS when not null
     * @param advertiseHost the host name in the addresses handed out (WSDL, instance references); null:
     *                      the bind address, or this host's name when bound to every interface
     * @throws IllegalStateException if the port cannot be bound
     */
    public static WsTransport bind(InetSocketAddress address, Admission admission, Settings settings, Tls tls,
                                   String advertiseHost) {
        int cores = Runtime.getRuntime().availableProcessors();
        ThreadPoolExecutor workers = new ThreadPoolExecutor(Math.max(2, cores), Math.max(2, cores), 60,
                TimeUnit.SECONDS, new ArrayBlockingQueue<>(4096), new DefaultThreadFactory("falkon-ws-worker", true));
        WsGateway gateway = new WsGateway(admission, settings, workers);
        // ready before the port is bound: a caller who comes before the address is known gets a 503
        WsService service = new WsService(gateway, SERVICE_PATH);
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("falkon-ws-accept", true),
                NioIoHandler.newFactory());
        EventLoopGroup io = new MultiThreadIoEventLoopGroup(Math.max(1, cores / 2),
                new DefaultThreadFactory("falkon-ws-io", true), NioIoHandler.newFactory());
        AtomicInteger open = new AtomicInteger();
        AtomicLong buffered = new AtomicLong();
        long maxBuffered = Math.max(64L << 20, 4L * settings.maxRequestBytes());
        String[] serviceUrl = new String[1];
        AcceptedChannels accepted = new AcceptedChannels();
        try {
            Channel ch = new ServerBootstrap().group(boss, io).channel(NioServerSocketChannel.class)
                    .option(ChannelOption.SO_BACKLOG, 1024)
                    .option(ChannelOption.SO_REUSEADDR, true)
                    .handler(accepted)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel c) {
                            c.pipeline().addLast(new ConnectionLimit(open, settings.maxConnections(),
                                    admission.badRequests()::refused, "ws"));
                            if (tls != null) {
                                c.pipeline().addLast("tls", tls.serverHandler(c.alloc()));
                            }
                            c.pipeline().addLast(new HttpServerCodec(4096, 16 * 1024, 64 * 1024));
                            c.pipeline().addLast(new IdleStateHandler(settings.idleTimeoutSeconds(), 0, 0));
                            c.pipeline().addLast(new WsHttpHandler(service, settings, workers, buffered, maxBuffered,
                                    admission.badRequests()));
                        }
                    }).bind(address).sync().channel();
            int port = ((InetSocketAddress) ch.localAddress()).getPort();
            serviceUrl[0] = (tls == null ? "http://" : "https://") + AdvertisedHost.of(address, advertiseHost) + ":" + port
                    + SERVICE_PATH;
            service.publish(serviceUrl[0], wsdl(serviceUrl[0]));
            log.info("WS interface at {} (WSDL: {}?wsdl)", serviceUrl[0], serviceUrl[0]);
            return new WsTransport(boss, io, workers, gateway, ch, serviceUrl[0], accepted);
        } catch (Exception e) { // sync() rethrows the bind's BindException, a checked exception, undeclared
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            boss.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            io.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            workers.shutdownNow();
            throw new IllegalStateException("cannot start the WS interface on " + address + ": " + e.getMessage(), e);
        }
    }

    /** The hand-written WSDL with this service's address in it. */
    static byte[] wsdl(String url) throws IOException {
        try (InputStream in = WsTransport.class.getResourceAsStream("falkon.wsdl")) {
            if (in == null) {
                throw new IOException("falkon.wsdl is missing from the dispatcher jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("@ADDRESS@", url)
                    .getBytes(StandardCharsets.UTF_8);
        }
    }

    /** The service's address, e.g. {@code http://head:50600/axis2/services/Falkon}. */
    public String url() {
        return url;
    }

    @Override
    public int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    /** Stops listening, fails the calls in progress (the WS instances stay, detached), closes every connection. */
    @Override
    public String name() {
        return "ws";
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        server.close().awaitUninterruptibly();
        gateway.close();
        boss.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        accepted.closeAll(io); // idle keep-alive connections too
        io.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        workers.shutdownNow();
    }
}
