package io.falkon.dispatcher.admission;

import io.falkon.dispatcher.core.Link;

/**
 * An authenticated peer: the only way into the scheduler. Only {@link Admission} makes one, so a
 * transport cannot hand the scheduler anything from a peer that did not present the token, and what
 * it may hand on is fixed by the peer's {@link Role}. A caller belongs to one connection and is used
 * on that connection's thread.
 */
public final class Caller {
    private final Link link;
    private final String transport;
    private final Role role;
    /** An executor's REGISTER went through: from then on it sends work messages, never REGISTER again. */
    private boolean registered;

    Caller(Link link, String transport, Role role) {
        this.link = link;
        this.transport = transport;
        this.role = role;
    }

    public Link link() {
        return link;
    }

    /** {@code tcp}, {@code ws} or {@code in-process}, for logs. */
    public String transport() {
        return transport;
    }

    public Role role() {
        return role;
    }

    boolean registered() {
        return registered;
    }

    void registered(boolean yes) {
        registered = yes;
    }

    @Override
    public String toString() {
        return transport + " " + link.remote();
    }
}
