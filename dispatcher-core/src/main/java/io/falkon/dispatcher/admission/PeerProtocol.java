package io.falkon.dispatcher.admission;

import io.falkon.dispatcher.core.Link;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.LogSafe;
import io.falkon.protocol.Message;
import io.falkon.protocol.Protocol;

/**
 * One binary-protocol connection's state on the dispatcher, whatever carries its frames (a TCP
 * connection through Netty, a local executor's Unix socket): the handshake (HELLO, the token, then
 * WELCOME), the connection-level messages (HEARTBEAT, a peer's ERROR), and the hand-over of every
 * other message to the {@link Admission} stage. A transport decodes frames and calls
 * {@link #received} on the connection's one reading thread; anything that breaks the protocol
 * closes this connection only, through {@link #refuse}, with an ERROR naming the reason (logged
 * once, rate-limited).
 */
public final class PeerProtocol {

    /** What the protocol needs of the connection under it. */
    public interface Wire {
        /** Sends {@code m} (the WELCOME). */
        void send(Message m);

        /** Sends {@code error}, then closes the connection. */
        void sendAndClose(Message.ErrorMessage error);

        /** Closes the connection at once. */
        void close();
    }

    private enum State { AWAIT_HELLO, OPEN, CLOSED }

    private final Admission admission;
    private final Link link;
    private final String transport;
    private final Message.Welcome welcome;
    private final Wire wire;
    private Caller caller;
    private State state = State.AWAIT_HELLO;

    /**
     * @param transport {@code tcp}, {@code unix}: for logs and the caller's record
     * @param welcome   what an authenticated peer is told (heartbeats, frame limit, the dispatcher's id)
     */
    public PeerProtocol(Admission admission, Link link, String transport, Message.Welcome welcome, Wire wire) {
        this.admission = admission;
        this.link = link;
        this.transport = transport;
        this.welcome = welcome;
        this.wire = wire;
    }

    /** A decoded message from the peer. */
    public void received(Message m) {
        switch (state) {
            case AWAIT_HELLO -> hello(m);
            case OPEN -> message(m);
            case CLOSED -> {
                // ignore what arrives while closing
            }
        }
    }

    /** Whether the handshake is still to come (a transport's handshake timer asks). */
    public boolean awaitingHello() {
        return state == State.AWAIT_HELLO;
    }

    private void hello(Message m) {
        if (!(m instanceof Message.Hello h)) {
            refuse(ErrorCode.UNEXPECTED_MESSAGE, m.type() + " is not allowed here (expected HELLO)");
            return;
        }
        if (h.version() != Protocol.VERSION) {
            refuse(ErrorCode.UNSUPPORTED_VERSION, "protocol version " + h.version()
                    + " is not supported (this dispatcher speaks " + Protocol.VERSION + ")");
            return;
        }
        Role role;
        if (h.role() == Protocol.ROLE_EXECUTOR) {
            role = Role.EXECUTOR;
        } else if (h.role() == Protocol.ROLE_CLIENT) {
            role = Role.CLIENT;
        } else {
            refuse(ErrorCode.MALFORMED, "HELLO.role: unknown role " + h.role());
            return;
        }
        caller = admission.authenticate(link, transport, role, h.token());
        if (caller == null) {
            refuse(ErrorCode.UNAUTHORIZED, h.token().isEmpty()
                    ? "a token is required (--token-file, $FALKON_TOKEN, or ~/.falkon/token of the dispatcher's user)"
                    : "wrong token");
            return;
        }
        state = State.OPEN;
        wire.send(welcome);
    }

    private void message(Message m) {
        switch (m.type()) {
            case HEARTBEAT -> {
                // the read itself keeps the connection alive
            }
            case ERROR -> peerError((Message.ErrorMessage) m);
            default -> {
                String refused = admission.accept(caller, m);
                if (refused != null) {
                    refuse(ErrorCode.UNEXPECTED_MESSAGE, refused);
                }
            }
        }
    }

    private void peerError(Message.ErrorMessage e) {
        admission.badRequests().refused(caller.role().noun() + " at " + link.remote(), "reported error "
                + e.errorCode() + ": " + LogSafe.text(e.message()));
        if (e.errorCode().closesConnection()) {
            close();
        }
    }

    /** The connection breaks the protocol: logged, the peer told why, the connection closed. */
    public void refuse(ErrorCode code, String reason) {
        if (state == State.CLOSED) {
            return;
        }
        admission.badRequests().refused("closing connection from " + link.remote(), code + " " + reason);
        state = State.CLOSED;
        wire.sendAndClose(Message.ErrorMessage.of(0, code, reason));
    }

    /** Closes the connection without a word (the peer's transport failed, or it reported an error that ends it). */
    public void close() {
        state = State.CLOSED;
        wire.close();
    }

    /** The connection is gone, whichever side ended it: the scheduler forgets the peer. */
    public void ended() {
        state = State.CLOSED;
        if (caller != null) {
            admission.gone(caller);
            caller = null;
        }
    }
}
