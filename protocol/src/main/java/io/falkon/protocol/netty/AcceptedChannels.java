package io.falkon.protocol.netty;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Every connection a listener accepted, from the moment it is accepted, so that closing the
 * listener ends them all. Installed on the server channel ({@code ServerBootstrap.handler}), it
 * sees each accepted connection before it is handed to an I/O thread. Stopping the I/O threads
 * does not end the connections they serve: a peer that had said nothing (no HELLO yet, an idle
 * HTTP connection) would wait on an open socket, and the process would keep its descriptor, until
 * the process exits ({@code ServerTransportContract} shows it). {@link #closeAll} ends them first.
 */
@ChannelHandler.Sharable
public final class AcceptedChannels extends ChannelInboundHandlerAdapter {

    /** Sharable, as annotated; said here too: see {@link Frames}. */
    @Override
    public boolean isSharable() {
        return true;
    }
    private final Set<Channel> open = ConcurrentHashMap.newKeySet();

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof Channel child) {
            open.add(child);
            child.closeFuture().addListener(f -> open.remove(child));
        }
        ctx.fireChannelRead(msg);
    }

    /**
     * Closes every connection still open and waits (a second at most, for all of them) until they are closed. Call it
     * once the listener accepts no more (its server channel closed) and before the I/O threads of
     * {@code children} stop: a connection accepted last may still be on its way to one of them, so a
     * task queued behind it on every thread first lets each registration finish.
     */
    public void closeAll(EventLoopGroup children) {
        for (EventExecutor loop : children) {
            if (!loop.isShuttingDown()) {
                loop.submit(() -> { }).awaitUninterruptibly(1, TimeUnit.SECONDS);
            }
        }
        List<ChannelFuture> closing = new ArrayList<>();
        for (Channel c : open) {
            if (c.isRegistered()) {
                closing.add(c.close()); // all at once: each I/O thread closes its own
            }
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        for (ChannelFuture f : closing) {
            f.awaitUninterruptibly(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
    }
}
