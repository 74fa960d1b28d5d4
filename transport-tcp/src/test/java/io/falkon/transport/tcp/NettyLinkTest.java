package io.falkon.transport.tcp;

import io.falkon.dispatcher.core.Link;
import io.falkon.dispatcher.core.LinkContract;
import io.falkon.protocol.Message;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.netty.Frames;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.GlobalEventExecutor;
import org.junit.jupiter.api.AfterEach;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The link over a real TCP connection on 127.0.0.1: the dispatcher's side accepts, the peer's side
 * decodes the frames it is sent (the protocol's own framing on both).
 */
class NettyLinkTest extends LinkContract {
    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
    private final ChannelGroup leaving = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private Channel server;
    private Channel peer;

    @AfterEach
    void stop() {
        if (peer != null) {
            peer.close().awaitUninterruptibly();
        }
        if (server != null) {
            server.close().awaitUninterruptibly();
        }
        group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).awaitUninterruptibly();
    }

    @Override
    protected Link open() throws Exception {
        CompletableFuture<Channel> accepted = new CompletableFuture<>();
        server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        Frames.install(ch.pipeline(), Protocol.DEFAULT_MAX_FRAME_LENGTH);
                        accepted.complete(ch);
                    }
                }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
        peer = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        Frames.install(ch.pipeline(), Protocol.DEFAULT_MAX_FRAME_LENGTH);
                        ch.pipeline().addLast(new SimpleChannelInboundHandler<Message>() {
                            @Override
                            protected void channelRead0(ChannelHandlerContext ctx, Message m) {
                                received.add(m);
                            }

                            @Override
                            public void channelInactive(ChannelHandlerContext ctx) {
                                ended = true;
                            }
                        });
                    }
                }).connect(server.localAddress()).sync().channel();
        return new NettyLink(accepted.get(30, TimeUnit.SECONDS), leaving);
    }
}
