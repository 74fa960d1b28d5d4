package io.falkon.dispatcher.ws;

import io.falkon.dispatcher.core.Link;
import io.falkon.dispatcher.core.LinkContract;
import io.falkon.protocol.Message;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A WS instance's link: its peer is the gateway, which takes each batch as a list and hears the close. */
class WsLinkTest extends LinkContract {
    private final List<Message> received = new CopyOnWriteArrayList<>();
    private volatile boolean ended;

    @Override
    protected Link open() {
        return new WsLink("ws 127.0.0.1:1234", received::addAll, () -> ended = true);
    }

    @Override
    protected List<Message> received() {
        return received;
    }

    @Override
    protected boolean ended() {
        return ended;
    }
}
