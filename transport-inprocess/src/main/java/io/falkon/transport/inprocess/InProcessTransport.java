package io.falkon.transport.inprocess;

import io.falkon.dispatcher.admission.Admission;
import io.falkon.dispatcher.admission.ServerTransport;
import io.falkon.protocol.Message;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Clients in the dispatcher's own process ({@code falkon run}), with both ends of each connection:
 * {@link #connect()} gives the client's {@link InProcessConnection}, whose requests reach the
 * admission stage through an {@link InProcessClient} as the messages they are. A dispatcher plugs
 * it in as one more of its transports ({@code dispatcher.add(a -> new InProcessTransport(a, ...))}),
 * so that it is closed, in order, with the others: every client then hears that the dispatcher is
 * shutting down.
 */
public final class InProcessTransport implements ServerTransport {
    private final Admission admission;
    private final int maxFrameLength;
    private final Set<InProcessClient> clients = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /**
     * @param maxFrameLength the dispatcher's frame limit, which bounds a client's bundles as over TCP,
     *                       so that the same bundles are accepted whichever way they come
     */
    public InProcessTransport(Admission admission, int maxFrameLength) {
        this.admission = admission;
        this.maxFrameLength = maxFrameLength;
    }

    /** A new client connection to this dispatcher (a {@code FalkonClient} is built over it). */
    public InProcessConnection connect() {
        return InProcessConnection.open(maxFrameLength, c -> {
            InProcessClient end = accept(c::deliver, c::closedByDispatcher);
            return new InProcessConnection.Peer(end::send, end::close);
        });
    }

    /**
     * The dispatcher's end alone: {@code toClient} receives what the scheduler sends it, batch by
     * batch, and {@code onClose} hears when the dispatcher ends the connection (stopping, with the
     * ERROR that says why). A connection made after {@link #close()} is ended at once.
     */
    InProcessClient accept(Consumer<List<Message>> toClient, Consumer<Message.ErrorMessage> onClose) {
        InProcessClient[] self = new InProcessClient[1];
        InProcessClient c = InProcessClient.connect(admission, toClient, onClose, () -> clients.remove(self[0]));
        self[0] = c;
        clients.add(c);
        if (closed) {
            c.stop();
        }
        return c;
    }

    @Override
    public String name() {
        return "in-process";
    }

    /** None: nothing outside this process can reach it. */
    @Override
    public int port() {
        return -1;
    }

    /** Tells every client that the dispatcher is shutting down and ends its connection. */
    @Override
    public void close() {
        closed = true;
        for (InProcessClient c : clients) {
            c.stop();
        }
    }
}
