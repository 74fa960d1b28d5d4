package io.falkon.e2e.wire;

import io.falkon.client.Connection;
import io.falkon.transport.tcp.TcpConnection;
import io.falkon.transport.ws.WsConnection;

import java.time.Duration;

/** The connection contract over the binary TCP protocol. */
class TcpConnectionTest extends ConnectionContract {
    @Override
    protected Connection connect() {
        return TcpConnection.connect("127.0.0.1", dispatcher.port(), dispatcher.token(), null, Duration.ofSeconds(10),
                Duration.ZERO);
    }
}
