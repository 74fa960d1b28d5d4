package io.falkon.client.transport;

import java.time.Duration;

/** The connection contract over the Web Services interface (SOAP over HTTP). */
class WsConnectionTest extends ConnectionContract {
    @Override
    protected Connection connect() {
        return WsConnection.connect(dispatcher.wsUrl(), dispatcher.token(), null, Duration.ofSeconds(10));
    }
}
