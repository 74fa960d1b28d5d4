package io.falkon.client;

/**
 * How a transport reaches a dispatcher by its address: the transports' modules (falkon-transport-tcp
 * for {@code host:port}, falkon-transport-ws for {@code http(s)://} URLs) each provide one, found
 * with {@link java.util.ServiceLoader} ({@code META-INF/services/io.falkon.client.ConnectionFactory}),
 * so that this API depends on no transport and each transport keeps both ends of its wire.
 */
public interface ConnectionFactory {
    /** Whether this transport takes addresses of this form. */
    boolean accepts(String address);

    /**
     * Connects and completes the handshake, with the options' token, TLS and timeouts.
     *
     * @throws IllegalArgumentException if the address cannot be parsed
     * @throws FalkonException          if the dispatcher cannot be reached or refuses the handshake
     */
    Connection connect(String address, ClientOptions options);
}
