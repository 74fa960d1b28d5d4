package io.falkon.transport.monitor;

import io.falkon.dispatcher.admission.Admission;
import io.falkon.dispatcher.admission.ServerTransport;
import io.falkon.protocol.netty.AcceptedChannels;
import io.falkon.protocol.netty.ConnectionLimit;
import io.falkon.dispatcher.core.StatusSnapshot;
import io.falkon.protocol.AdvertisedHost;
import io.falkon.protocol.tls.Tls;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The dispatcher's monitoring port ({@code --http-port}): the live dashboard ({@code /}, its
 * assets and the {@code /events} stream of status documents), {@code /status} and {@code /metrics}
 * in the Prometheus text format. HTTP, or HTTPS with the dispatcher's TLS; every request presents
 * the token (as a bearer token, or once in {@code ?token=} on {@code /}, after which the browser
 * holds a session cookie derived from it). The dispatcher's sampler calls {@link #update} about
 * once a second with a snapshot taken on the scheduler thread; everything served is built from
 * the latest one, so watching costs the scheduler one snapshot a second however many watch.
 */
public final class MonitorTransport implements ServerTransport {
    private static final Logger log = LoggerFactory.getLogger(MonitorTransport.class);

    /**
     * Limits of the monitoring port.
     *
     * @param maxConnections connections open at once; more are closed at once
     * @param maxStreams     dashboards watching at once (each an open {@code /events} stream)
     * @param idleSeconds    a connection idle between requests this long is closed
     * @param requestSeconds a request must arrive whole within this long
     */
    public record Settings(int maxConnections, int maxStreams, int idleSeconds, int requestSeconds) {
        public static Settings defaults() {
            return new Settings(256, 32, 30, 10);
        }
    }

    /** The latest status: its snapshot (for /metrics) and rendered document (for /status and /events). */
    record Live(StatusSnapshot snapshot, String json) {
    }

    private final EventLoopGroup group;
    private final Settings settings;
    private final ChannelGroup streams = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private final AcceptedChannels accepted = new AcceptedChannels();
    private final Metrics metrics = new Metrics(() -> {
        Live l = live();
        return l == null ? null : l.snapshot();
    });
    private Channel server;
    private String url;
    private volatile Live live;

    private MonitorTransport(EventLoopGroup group, Settings settings) {
        this.group = group;
        this.settings = settings;
    }

    /**
     * Starts the monitoring port on {@code address} (port 0 picks a free one).
     *
     * @param tls           HTTPS when not null
     * @param advertiseHost the host in {@link #url()} (null: as {@link AdvertisedHost} finds it)
     * @throws IllegalStateException if the port cannot be bound
     */
    public static MonitorTransport bind(InetSocketAddress address, Admission admission, Settings settings, Tls tls,
                                        String advertiseHost) {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("falkon-http", true),
                NioIoHandler.newFactory());
        MonitorTransport self = new MonitorTransport(group, settings);
        AtomicInteger open = new AtomicInteger();
        try {
            self.server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                    .option(ChannelOption.SO_BACKLOG, 256)
                    .option(ChannelOption.SO_REUSEADDR, true)
                    .handler(self.accepted)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel c) {
                            c.pipeline().addLast(new ConnectionLimit(open, settings.maxConnections(),
                                    admission.badRequests()::refused, "http"));
                            RequestDeadline deadline = new RequestDeadline(settings.requestSeconds());
                            c.pipeline().addLast(deadline);
                            if (tls != null) {
                                c.pipeline().addLast("tls", tls.serverHandler(c.alloc()));
                            }
                            c.pipeline().addLast(new HttpServerCodec(4096, 8 * 1024, 8 * 1024));
                            c.pipeline().addLast(new HttpObjectAggregator(1024)); // GET only: no bodies
                            c.pipeline().addLast(IDLE, new IdleStateHandler(settings.idleSeconds(), 0, 0));
                            c.pipeline().addLast(new MonitorHandler(self, admission, deadline, tls != null));
                        }
                    }).bind(address).sync().channel();
            int port = ((InetSocketAddress) self.server.localAddress()).getPort();
            self.url = (tls == null ? "http://" : "https://") + AdvertisedHost.of(address, advertiseHost) + ":" + port + "/";
            log.info("dashboard and metrics at {}", self.url);
            return self;
        } catch (Exception e) { // sync() rethrows the bind's BindException, a checked exception, undeclared
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            throw new IllegalStateException("cannot start the monitoring port on " + address + ": " + e.getMessage(), e);
        }
    }

    static final String IDLE = "idle";

    /** The dashboard's address, e.g. {@code http://head:50700/}. */
    public String url() {
        return url;
    }

    @Override
    public int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    /** A new status (from the dispatcher's sampler): kept for requests, and sent to every dashboard watching. */
    public void update(StatusSnapshot snapshot, String json) {
        live = new Live(snapshot, json);
        if (streams.isEmpty()) {
            return;
        }
        byte[] event = ("data: " + json + "\n\n").getBytes(StandardCharsets.UTF_8);
        for (Channel c : streams) {
            if (c.isWritable()) { // a browser that does not keep up misses updates rather than piling them up here
                c.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(event)));
            }
        }
    }

    Live live() {
        return live;
    }

    Metrics metrics() {
        return metrics;
    }

    /** Adds a dashboard's event stream; false when as many are open as allowed. */
    boolean watch(Channel c) {
        if (streams.size() >= settings.maxStreams()) {
            return false;
        }
        streams.add(c);
        return true;
    }

    /** How many dashboards are watching. */
    public int watching() {
        return streams.size();
    }

    @Override
    public String name() {
        return "http";
    }

    @Override
    public void close() {
        streams.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
        server.close().awaitUninterruptibly();
        accepted.closeAll(group); // idle keep-alive connections too
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
    }
}
