package io.falkon.dispatcher.admission;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * First in the pipeline of an HTTP listener (the WS interface, the dashboard): a connection over
 * the limit is closed at once, before a byte of it is read, and logged (rate-limited) as refused.
 * One instance per connection; {@code open} is shared by the listener's connections.
 */
public final class ConnectionLimit extends ChannelInboundHandlerAdapter {
    private final AtomicInteger open;
    private final int max;
    private final Admission admission;
    private final String transport;

    public ConnectionLimit(AtomicInteger open, int max, Admission admission, String transport) {
        this.open = open;
        this.max = max;
        this.admission = admission;
        this.transport = transport;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        if (open.incrementAndGet() > max) {
            admission.badRequests().refused(transport + " " + ctx.channel().remoteAddress(), "over " + max
                    + " connections: refused");
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
