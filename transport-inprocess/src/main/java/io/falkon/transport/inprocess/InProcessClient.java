package io.falkon.transport.inprocess;

import io.falkon.dispatcher.admission.Admission;
import io.falkon.dispatcher.admission.Caller;
import io.falkon.dispatcher.core.BufferedLink;
import io.falkon.dispatcher.core.Link;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Message;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The dispatcher's end of a connection from a client in this same process ({@code falkon run}'s
 * own): its requests go to the {@link Admission} stage as the messages they are, and what the
 * scheduler sends it goes back as messages, with no codec, socket or I/O thread in between. Nothing
 * outside the process can reach this end, so it presents no token; its SUBMITs are validated as
 * any other client's are.
 */
final class InProcessClient implements AutoCloseable {
    private final Admission admission;
    private final Consumer<List<Message>> toClient;
    private final Consumer<Message.ErrorMessage> onClose;
    private final Runnable onEnd;
    private final Caller caller;
    private final AtomicBoolean closed = new AtomicBoolean();

    private InProcessClient(Admission admission, Consumer<List<Message>> toClient,
                            Consumer<Message.ErrorMessage> onClose, Runnable onEnd) {
        this.admission = admission;
        this.toClient = toClient;
        this.onClose = onClose;
        this.onEnd = onEnd;
        this.caller = admission.inProcess(new InProcessLink());
    }

    /**
     * @param toClient receives what the scheduler sends, batch by batch in order, on whichever thread
     *                 sends a batch (it must hand them to the client's own thread)
     * @param onClose  told when the dispatcher closes the connection, with the ERROR that says why, or null
     * @param onEnd    run once when the connection ends, whichever side ends it
     */
    static InProcessClient connect(Admission admission, Consumer<List<Message>> toClient,
                                          Consumer<Message.ErrorMessage> onClose, Runnable onEnd) {
        return new InProcessClient(admission, toClient, onClose, onEnd);
    }

    /** A request from the client (CREATE_INSTANCE, SUBMIT, STATUS_REQUEST, DESTROY, HALT, ATTACH or ACK). */
    public void send(Message m) {
        if (closed.get()) {
            return;
        }
        String refused = admission.accept(caller, m);
        if (refused != null) {
            throw new IllegalArgumentException(refused);
        }
    }

    /** The scheduler's side of this connection (for the link contract test). */
    Link link() {
        return caller.link();
    }

    /** The client hung up: its instances are treated as after a lost TCP connection. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            admission.gone(caller);
            onEnd.run();
        }
    }

    /** The dispatcher is stopping: the client hears that its connection ended. */
    public void stop() {
        ended(Message.ErrorMessage.of(0, ErrorCode.SHUTTING_DOWN, "the dispatcher is shutting down"));
    }

    /** The dispatcher ended the connection: the scheduler forgets it as a client, the client hears why. */
    private void ended(Message.ErrorMessage error) {
        if (closed.compareAndSet(false, true)) {
            admission.gone(caller);
            onEnd.run();
            onClose.accept(error);
        }
    }

    /** The scheduler's side: a batch's messages are handed over as one list. */
    private final class InProcessLink extends BufferedLink {
        @Override
        protected void deliver(List<Message> batch) {
            toClient.accept(batch);
        }

        @Override
        protected void closed(Message.ErrorMessage error) {
            ended(error);
        }

        @Override
        public String remote() {
            return "in-process";
        }

        @Override
        public String remoteHost() {
            return "127.0.0.1";
        }

        @Override
        public String toString() {
            return "in-process link";
        }
    }
}
