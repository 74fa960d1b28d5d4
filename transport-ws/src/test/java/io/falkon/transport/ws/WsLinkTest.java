package io.falkon.transport.ws;

import io.falkon.dispatcher.core.Link;
import io.falkon.dispatcher.core.LinkContract;


/** A WS instance's link: its peer is the gateway, which takes each batch as a list and hears the close. */
class WsLinkTest extends LinkContract {
    @Override
    protected Link open() {
        return new WsLink("ws 127.0.0.1:1234", received::addAll, () -> ended = true);
    }
}
