package io.falkon.transport.tcp;

import io.falkon.client.ClientOptions;
import io.falkon.client.Connection;
import io.falkon.client.ConnectionFactory;
import io.falkon.protocol.HostPort;

/** {@code host:port} (or {@code tcp://host:port}, or {@code host}): the binary protocol over TCP. */
public final class TcpConnectionFactory implements ConnectionFactory {
    @Override
    public boolean accepts(String address) {
        return !address.startsWith("http://") && !address.startsWith("https://");
    }

    @Override
    public Connection connect(String address, ClientOptions options) {
        HostPort hp = HostPort.parse(address);
        return TcpConnection.connect(hp.host(), hp.port(), options.resolvedToken(), options.tls(),
                options.connectTimeout(), options.reconnectFor());
    }
}
