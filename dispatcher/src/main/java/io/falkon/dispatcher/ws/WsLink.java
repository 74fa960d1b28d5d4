package io.falkon.dispatcher.ws;

import io.falkon.dispatcher.core.Link;
import io.falkon.protocol.Message;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A WS instance's connection as the scheduler sees it: every WS instance is a client of the
 * scheduler of its own, owning its instance through this link, so leases, result retention,
 * journaling and the memory budget are the scheduler's, exactly as for a TCP client. What the
 * scheduler sends it during a batch is handed to the gateway at the end of the batch (after the
 * journal commit). Its lease is idle time: it runs from the last call, not from a disconnection.
 */
final class WsLink implements Link {
    private final String remote;
    private final Consumer<List<Message>> receiver;
    private final Runnable closed;
    private List<Message> buffered = new ArrayList<>();

    /**
     * @param receiver gets each batch's messages (on the thread that sends batches: keep it short)
     * @param closed   run when the scheduler closes the link
     */
    WsLink(String remote, Consumer<List<Message>> receiver, Runnable closed) {
        this.remote = remote;
        this.receiver = receiver;
        this.closed = closed;
    }

    @Override
    public boolean enqueue(Message message) {
        buffered.add(message);
        return buffered.size() == 1;
    }

    @Override
    public Runnable takeFlush() {
        if (buffered.isEmpty()) {
            return null;
        }
        List<Message> out = buffered;
        buffered = new ArrayList<>();
        return () -> receiver.accept(out);
    }

    @Override
    public void close(Message.ErrorMessage error) {
        List<Message> out = buffered;
        buffered = new ArrayList<>();
        if (!out.isEmpty()) {
            receiver.accept(out);
        }
        closed.run();
    }

    @Override
    public String remote() {
        return remote;
    }

    @Override
    public String remoteHost() {
        return "127.0.0.1";
    }

    @Override
    public boolean leaseRunsWhileAttached() {
        return true;
    }

    @Override
    public String toString() {
        return "WS link " + remote;
    }
}
