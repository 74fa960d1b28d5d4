package io.falkon.transport.ws;

import io.falkon.client.ClientOptions;
import io.falkon.client.Connection;
import io.falkon.client.ConnectionFactory;

/** {@code http(s)://…/axis2/services/Falkon}: the Web Services interface (docs/ws.md). */
public final class WsConnectionFactory implements ConnectionFactory {
    @Override
    public boolean accepts(String address) {
        return address.startsWith("http://") || address.startsWith("https://");
    }

    @Override
    public Connection connect(String address, ClientOptions options) {
        return WsConnection.connect(address, options.resolvedToken(), options.tls(), options.connectTimeout());
    }
}
