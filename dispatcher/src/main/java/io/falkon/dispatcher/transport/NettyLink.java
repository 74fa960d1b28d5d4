package io.falkon.dispatcher.transport;

import io.falkon.dispatcher.core.Link;
import io.falkon.protocol.Message;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link Link} over a Netty channel. Messages the scheduler enqueues during a batch are handed
 * to the channel's event loop as one task by the action {@link #takeFlush()} returns, which writes
 * them all and flushes once: one system call per connection per batch.
 */
final class NettyLink implements Link {
    private final Channel channel;
    private final String remote;
    private List<Message> pending = new ArrayList<>();

    NettyLink(Channel channel) {
        this.channel = channel;
        this.remote = String.valueOf(channel.remoteAddress());
    }

    Channel channel() {
        return channel;
    }

    @Override
    public boolean enqueue(Message message) {
        pending.add(message);
        return pending.size() == 1;
    }

    @Override
    public Runnable takeFlush() {
        if (pending.isEmpty()) {
            return null;
        }
        List<Message> out = pending;
        pending = new ArrayList<>(Math.max(4, out.size()));
        return () -> channel.eventLoop().execute(() -> {
            for (int i = 0, n = out.size(); i < n; i++) {
                channel.write(out.get(i), channel.voidPromise());
            }
            channel.flush();
        });
    }

    @Override
    public void close(Message.ErrorMessage error) {
        List<Message> out = pending;
        pending = new ArrayList<>();
        channel.eventLoop().execute(() -> {
            for (Message m : out) {
                channel.write(m, channel.voidPromise());
            }
            if (error != null) {
                channel.writeAndFlush(error).addListener(ChannelFutureListener.CLOSE);
            } else {
                channel.flush();
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
