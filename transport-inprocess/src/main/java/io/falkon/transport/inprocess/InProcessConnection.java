package io.falkon.transport.inprocess;

import io.falkon.client.ConnectionLostException;
import io.falkon.client.FalkonException;
import io.falkon.client.Connection;
import io.falkon.client.MessageConnection;
import io.falkon.protocol.Message;

import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The client's end of a connection to a dispatcher in this same process ({@code falkon run}'s own
 * client): messages pass as objects, with no encoding, socket or network thread between client and
 * dispatcher. The dispatcher's end ({@link InProcessClient}) hands this connection what it sends with
 * {@link #deliver} and says it closed with {@link #closedByDispatcher}; replies and results are
 * then handled on this connection's own serial thread, as the {@link Connection} contract says.
 *
 * <p>Over TCP a {@code falkon run} of short tasks spent a third of its dispatcher's CPU on its own
 * client connection: encoding, loopback writes and two I/O threads' wake-ups per batch of results
 * (docs/benchmarks.md). A connection in one process cannot break on its own, so it never
 * reconnects; it ends when either side closes.
 */
public final class InProcessConnection extends MessageConnection {
    /** Room left under the dispatcher's frame limit for a SUBMIT's own fields, as over TCP. */
    private static final int FRAME_HEADROOM = 1024;

    /** The dispatcher's end: what it receives, and how to hang up. */
    record Peer(Consumer<Message> send, Runnable close) {
    }

    private final ExecutorService io;
    private final int maxFrameLength;
    private volatile Peer peer;
    private volatile boolean closed;

    private InProcessConnection(int maxFrameLength) {
        super("in-process");
        this.maxFrameLength = maxFrameLength;
        this.io = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "falkon-client");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Opens a connection; {@code connect} attaches it to the dispatcher's end and returns that end.
     *
     * @param maxFrameLength the dispatcher's frame limit, which bounds a bundle as over TCP (so that
     *                       the same bundles are accepted whichever way they come)
     */
    static InProcessConnection open(int maxFrameLength, Function<InProcessConnection, Peer> connect) {
        InProcessConnection c = new InProcessConnection(maxFrameLength);
        c.peer = connect.apply(c);
        return c;
    }

    /** What the dispatcher sends, in its order; handled on this connection's thread. */
    void deliver(List<Message> messages) {
        onIo(() -> {
            for (int i = 0, n = messages.size(); i < n; i++) {
                received(messages.get(i));
            }
        });
    }

    /** The dispatcher closed this connection ({@code error}: why, or null): nothing more will come. */
    void closedByDispatcher(Message.ErrorMessage error) {
        onIo(() -> failAll(error == null
                ? new ConnectionLostException("the dispatcher in this process closed the connection", null)
                : new FalkonException(error.errorCode(), "the dispatcher in this process closed the connection: "
                        + error.message())));
    }

    private void onIo(Runnable r) {
        try {
            io.execute(r);
        } catch (RejectedExecutionException e) {
            // closed: whatever still arrives has nobody to go to
        }
    }

    @Override
    protected void send(Message m) {
        if (!closed && !failed()) {
            peer.send().accept(m);
        }
    }

    @Override
    public Executor executor() {
        return io;
    }

    @Override
    public int maxBundleBytes() {
        return maxFrameLength - FRAME_HEADROOM;
    }

    @Override
    public boolean connected() {
        return !closed && !failed();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        peer.close().run();
        io.shutdown();
        try {
            io.awaitTermination(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!failed()) {
            failAll(new ConnectionLostException("the connection to the dispatcher in this process was closed", null));
        }
    }
}
