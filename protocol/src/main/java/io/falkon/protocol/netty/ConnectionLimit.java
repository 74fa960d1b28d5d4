package io.falkon.protocol.netty;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

/**
 * First in the pipeline of an HTTP listener (the WS interface, the dashboard): a connection over
 * the limit is closed at once, before a byte of it is read, and reported as refused (the
 * dispatcher's rate-limited log of bad requests). One instance per connection; {@code open} is
 * shared by the listener's connections.
 */
public final class ConnectionLimit extends ChannelInboundHandlerAdapter {
    private final AtomicInteger open;
    private final int max;
    private final BiConsumer<String, String> refused;
    private final String transport;

    /**
     * @param refused told who was refused ({@code transport} and the remote address) and why
     */
    public ConnectionLimit(AtomicInteger open, int max, BiConsumer<String, String> refused, String transport) {
        this.open = open;
        this.max = max;
        this.refused = refused;
        this.transport = transport;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        if (open.incrementAndGet() > max) {
            refused.accept(transport + " " + ctx.channel().remoteAddress(), "over " + max + " connections: refused");
            ctx.close();
            return;
        }
        super.channelActive(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        open.decrementAndGet();
        super.channelInactive(ctx);
    }

    /** Not sharable: each connection counts itself once. */
    @Override
    public boolean isSharable() {
        return false;
    }
}
