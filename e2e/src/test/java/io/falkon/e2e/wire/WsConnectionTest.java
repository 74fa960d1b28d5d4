package io.falkon.e2e.wire;

import io.falkon.client.Connection;
import io.falkon.transport.tcp.TcpConnection;
import io.falkon.transport.ws.WsConnection;

import java.time.Duration;

/** The connection contract over the Web Services interface (SOAP over HTTP). */
class WsConnectionTest extends ConnectionContract {
    @Override
    protected Connection connect() {
        return WsConnection.connect(dispatcher.wsUrl(), dispatcher.token(), null, Duration.ofSeconds(10));
    }
}
