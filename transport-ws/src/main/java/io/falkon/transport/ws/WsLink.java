package io.falkon.transport.ws;

import io.falkon.dispatcher.core.BufferedLink;
import io.falkon.protocol.Message;

import java.util.List;
import java.util.function.Consumer;

/**
 * A WS instance's connection as the scheduler sees it: every WS instance is a client of the
 * scheduler of its own, owning its instance through this link, so leases, result retention,
 * journaling and the memory budget are the scheduler's, exactly as for a TCP client. What the
 * scheduler sends it during a batch is handed to the gateway at the end of the batch (after the
 * journal commit). Its lease is idle time: it runs from the last call, not from a disconnection.
 */
final class WsLink extends BufferedLink {
    private final String remote;
    private final Consumer<List<Message>> receiver;
    private final Runnable closed;

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
    protected void deliver(List<Message> batch) {
        receiver.accept(batch);
    }

    @Override
    protected void closed(Message.ErrorMessage error) {
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
