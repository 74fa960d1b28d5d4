package io.falkon.dispatcher.transport;

import io.falkon.dispatcher.core.BufferedLink;
import io.falkon.protocol.Message;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;

import java.net.InetSocketAddress;
import java.util.List;

/**
 * A link over a Netty channel. The messages the scheduler enqueues during a batch are handed to
 * the channel's event loop as one task, which writes them all and flushes once: one system call
 * per connection per batch.
 */
final class NettyLink extends BufferedLink {
    private final Channel channel;
    private final String remote;

    NettyLink(Channel channel) {
        this.channel = channel;
        this.remote = String.valueOf(channel.remoteAddress());
    }

    Channel channel() {
        return channel;
    }

    @Override
    protected void deliver(List<Message> batch) {
        channel.eventLoop().execute(() -> {
            for (int i = 0, n = batch.size(); i < n; i++) {
                channel.write(batch.get(i), channel.voidPromise());
            }
            channel.flush();
        });
    }

    @Override
    protected void closed(Message.ErrorMessage error) {
        channel.eventLoop().execute(() -> {
            if (error != null) {
                channel.writeAndFlush(error).addListener(ChannelFutureListener.CLOSE);
            } else {
                channel.close();
            }
        });
    }

    @Override
    public String remote() {
        return remote;
    }

    @Override
    public String remoteHost() {
        return channel.remoteAddress() instanceof InetSocketAddress a ? a.getAddress().getHostAddress()
                : "127.0.0.1";
    }

    @Override
    public String toString() {
        return "link " + remote;
    }
}
