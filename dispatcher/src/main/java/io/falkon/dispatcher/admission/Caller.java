package io.falkon.dispatcher.admission;

import io.falkon.dispatcher.core.Link;

/**
 * An authenticated peer: the only way into the scheduler. Only {@link Admission#authenticate} makes
 * one, so a transport cannot hand the scheduler anything from a peer that did not present the token.
 *
 * @param transport {@code tcp} or {@code ws}, for logs
 */
public final class Caller {
    private final Link link;
    private final String transport;

    Caller(Link link, String transport) {
        this.link = link;
        this.transport = transport;
    }

    public Link link() {
        return link;
    }

    public String transport() {
        return transport;
    }

    @Override
    public String toString() {
        return transport + " " + link.remote();
    }
}
