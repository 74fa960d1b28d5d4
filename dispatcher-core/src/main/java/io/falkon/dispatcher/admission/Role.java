package io.falkon.dispatcher.admission;

import io.falkon.protocol.MessageType;

import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Who a peer said it is when it connected, and so which of its messages go on to the scheduler:
 * the one table of what a client and an executor may send (docs/protocol.md, "Roles"). The
 * connection-level messages (HEARTBEAT, an ERROR the peer reports) stay with the transport; every
 * other type that is not in its role's set is refused by {@link Admission#accept} before the
 * scheduler could see it.
 */
public enum Role {
    CLIENT("a client", EnumSet.of(MessageType.CREATE_INSTANCE, MessageType.SUBMIT, MessageType.STATUS_REQUEST,
            MessageType.DESTROY, MessageType.HALT, MessageType.CANCEL_TASKS, MessageType.ATTACH, MessageType.ATTACH_MOVED, MessageType.ACK)),
    /** An executor sends REGISTER first, once per connection (checked by {@link Admission#accept}). */
    EXECUTOR("an executor", EnumSet.of(MessageType.REGISTER, MessageType.CREDIT, MessageType.RESULT,
            MessageType.CACHE_UPDATE));

    private final String noun;
    private final Set<MessageType> requests;

    Role(String noun, Set<MessageType> requests) {
        this.noun = noun;
        this.requests = requests;
    }

    /** Whether the scheduler takes this type of message from a peer in this role. */
    public boolean sends(MessageType type) {
        return requests.contains(type);
    }

    /** "a client", "an executor": for reasons given to a peer. */
    public String noun() {
        return noun;
    }

    /** The types this role may send, for a refusal's "expected ...". */
    String expected() {
        return requests.stream().map(Enum::name).collect(Collectors.joining(", "));
    }
}
