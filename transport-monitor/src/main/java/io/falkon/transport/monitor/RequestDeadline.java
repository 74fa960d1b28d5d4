package io.falkon.transport.monitor;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.ScheduledFuture;

import java.util.concurrent.TimeUnit;

/**
 * A request must arrive whole within a few seconds of its first byte: a client that sends its
 * headers a byte at a time (slowloris) is closed, however often it sends. Sits before TLS and
 * the HTTP codec, so it sees raw bytes; the handler says when a request is complete.
 */
final class RequestDeadline extends ChannelInboundHandlerAdapter {
    private final int seconds;
    private ScheduledFuture<?> pending;
    private boolean off;

    RequestDeadline(int seconds) {
        this.seconds = seconds;
    }

    @Override
    public void channelRead(ChannelHandlerContext c, Object msg) {
        if (pending == null && !off) {
            pending = c.executor().schedule(() -> c.close(), seconds, TimeUnit.SECONDS);
        }
        c.fireChannelRead(msg);
    }

    /** The request being read is complete (event loop). */
    void complete() {
        if (pending != null) {
            pending.cancel(false);
            pending = null;
        }
    }

    /** The connection became an event stream: the client sends nothing more and nothing is timed. */
    void off() {
        complete();
        off = true;
    }

    @Override
    public void channelInactive(ChannelHandlerContext c) throws Exception {
        complete();
        super.channelInactive(c);
    }
}
