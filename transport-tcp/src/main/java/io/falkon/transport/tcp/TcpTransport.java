package io.falkon.transport.tcp;

import io.falkon.dispatcher.admission.Admission;
import io.falkon.dispatcher.admission.ServerTransport;
import io.falkon.protocol.netty.AcceptedChannels;
import io.falkon.protocol.netty.Frames;
import io.falkon.protocol.tls.Tls;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GlobalEventExecutor;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * The dispatcher's TCP endpoint: Netty decodes frames (over TLS when configured) and hands each
 * peer's messages to the {@link Admission} stage.
 */
public final class TcpTransport implements ServerTransport {

    /**
     * @param heartbeatMillis send a heartbeat after this long without writing (0: off); told to peers in WELCOME
     * @param deadAfterMillis close a connection after this long without reading anything (0: never)
     * @param tls             TLS for every connection, or null for plain text
     */
    public record Settings(String dispatcherId, int maxFrameLength, long heartbeatMillis, long deadAfterMillis,
                           long handshakeTimeoutMillis, Tls tls) {
    }

    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final Channel server;
    private final ChannelGroup leaving;
    private final AcceptedChannels accepted;

    private TcpTransport(EventLoopGroup boss, EventLoopGroup workers, Channel server, ChannelGroup leaving,
                         AcceptedChannels accepted) {
        this.boss = boss;
        this.workers = workers;
        this.server = server;
        this.leaving = leaving;
        this.accepted = accepted;
    }

    public static TcpTransport bind(InetSocketAddress address, int ioThreads, Settings settings, Admission admission)
            throws InterruptedException {
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("falkon-accept", true),
                NioIoHandler.newFactory());
        EventLoopGroup workers = new MultiThreadIoEventLoopGroup(ioThreads,
                new DefaultThreadFactory("falkon-io", true), NioIoHandler.newFactory());
        ChannelGroup leaving = new DefaultChannelGroup("falkon-leaving", GlobalEventExecutor.INSTANCE);
        AcceptedChannels accepted = new AcceptedChannels();
        try {
            ServerBootstrap b = new ServerBootstrap()
                    .group(boss, workers)
                    .channel(NioServerSocketChannel.class)
                    .option(ChannelOption.SO_BACKLOG, 1024)
                    .option(ChannelOption.SO_REUSEADDR, true)
                    .handler(accepted)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childOption(ChannelOption.SO_KEEPALIVE, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        public boolean isSharable() {
                            return true; // one for every connection, as ChannelInitializer's annotation says (see Frames)
                        }

                        @Override
                        protected void initChannel(SocketChannel ch) {
                            if (settings.tls() != null) {
                                ch.pipeline().addLast("tls", settings.tls().serverHandler(ch.alloc()));
                            }
                            if (settings.heartbeatMillis() > 0 || settings.deadAfterMillis() > 0) {
                                ch.pipeline().addLast(new IdleStateHandler(settings.deadAfterMillis(),
                                        settings.heartbeatMillis(), 0, TimeUnit.MILLISECONDS));
                            }
                            Frames.install(ch.pipeline(), settings.maxFrameLength());
                            ch.pipeline().addLast(new PeerHandler(settings, admission, leaving));
                        }
                    });
            Channel server = b.bind(address).sync().channel();
            return new TcpTransport(boss, workers, server, leaving, accepted);
        } catch (Exception e) { // sync() rethrows the bind's BindException, a checked exception, undeclared
            boss.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            workers.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            if (e instanceof InterruptedException ie) {
                throw ie;
            }
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    public InetSocketAddress localAddress() {
        return (InetSocketAddress) server.localAddress();
    }

    @Override
    public int port() {
        return localAddress().getPort();
    }

    /** Stops accepting connections (existing ones stay open until {@link #close()}). */
    public void stopAccepting() {
        server.close().syncUninterruptibly();
    }

    @Override
    public String name() {
        return "tcp";
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        // the boss served the listening socket alone: it stops while the peers leave
        Future<?> bossStopped = boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        // peers told why their link closes (executors told the dispatcher is stopping) read it and
        // go; the event loops stop after they have, or after NettyLink.LEAVE_MILLIS
        leaving.newCloseFuture().awaitUninterruptibly(NettyLink.LEAVE_MILLIS + 500);
        accepted.closeAll(workers); // those that never said a word (no HELLO yet) too
        workers.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        bossStopped.syncUninterruptibly();
    }
}
