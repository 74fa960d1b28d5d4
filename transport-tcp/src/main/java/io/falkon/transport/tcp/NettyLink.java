package io.falkon.transport.tcp;

import io.falkon.dispatcher.core.BufferedLink;
import io.falkon.protocol.Message;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.socket.SocketChannel;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A link over a Netty channel. The messages the scheduler enqueues during a batch are handed to
 * the channel's event loop as one task, which writes them all and flushes once: one system call
 * per connection per batch.
 *
 * <p>A link the scheduler closes with a reason (an executor told the dispatcher is stopping, a
 * duplicate executor) is closed the polite way: the reason, then the end of our output, then the
 * peer's own close, read to its end. Closing at once while the peer's latest bytes lie unread
 * makes the kernel reset the connection, and a peer that writes before it reads (a heartbeat, a
 * credit) then sees the reset and never reads the reason: an executor told to leave would dial
 * a stopped dispatcher again for its whole --reconnect-for. A peer that does not close within
 * {@link #LEAVE_MILLIS} is closed anyway.
 */
final class NettyLink extends BufferedLink {
    static final long LEAVE_MILLIS = 2000;

    private final Channel channel;
    private final String remote;
    private final ChannelGroup leaving;
    private volatile boolean closing;

    /** @param leaving where a link closed with a reason waits for its peer to go (the transport waits for them) */
    NettyLink(Channel channel, ChannelGroup leaving) {
        this.channel = channel;
        this.remote = String.valueOf(channel.remoteAddress());
        this.leaving = leaving;
    }

    Channel channel() {
        return channel;
    }

    /** Whether the scheduler has closed the link: what the peer still sends is dropped. */
    boolean closing() {
        return closing;
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
        closing = true;
        if (error == null) {
            channel.eventLoop().execute(channel::close);
            return;
        }
        leaving.add(channel); // before the event loop runs the task: the transport's close waits for it
        channel.eventLoop().execute(() -> channel.writeAndFlush(error).addListener(
                (ChannelFutureListener) this::endOutput));
    }

    private void endOutput(ChannelFuture written) {
        if (written.isSuccess() && channel instanceof SocketChannel s && s.isActive()) {
            // the peer reads the reason, then the end of the stream, and closes: that closes ours
            s.shutdownOutput();
            channel.eventLoop().schedule(() -> channel.close(), LEAVE_MILLIS, TimeUnit.MILLISECONDS);
        } else {
            channel.close();
        }
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
