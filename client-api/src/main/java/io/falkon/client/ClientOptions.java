package io.falkon.client;

import java.time.Duration;
import java.util.Objects;

/**
 * Tuning of a {@link FalkonClient}.
 *
 * @param bundleSize     most tasks per SUBMIT message; submissions are coalesced up to this size
 * @param maxInFlight    most tasks submitted but not yet finished; {@code submit} blocks beyond it
 * @param connectTimeout how long to wait for the dispatcher to accept the connection
 * @param token          shared secret the dispatcher requires, empty for none
 * @param clientName     the name instances are created under (shown in status)
 * @param leaseSeconds   how long the dispatcher keeps an instance (running its tasks, keeping its results)
 *                       after this client's connection drops, so that it can re-attach; 0: not at all
 * @param reconnectFor   after losing the connection, keep dialling with back-off this long, then fail
 *                       every unfinished task ({@link Duration#ZERO}: fail at once)
 */
public record ClientOptions(int bundleSize, int maxInFlight, Duration connectTimeout, String token,
                            String clientName, long leaseSeconds, Duration reconnectFor) {

    public ClientOptions {
        if (bundleSize < 1) {
            throw new IllegalArgumentException("bundleSize must be at least 1, got " + bundleSize);
        }
        if (maxInFlight < bundleSize) {
            throw new IllegalArgumentException("maxInFlight (" + maxInFlight + ") must be at least bundleSize ("
                    + bundleSize + ")");
        }
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(clientName, "clientName");
        Objects.requireNonNull(reconnectFor, "reconnectFor");
        if (leaseSeconds < 0 || leaseSeconds > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("leaseSeconds out of range: " + leaseSeconds);
        }
    }

    /**
     * Bundles of 100, 100,000 tasks in flight, 10 s connect timeout, no token, instances kept 120 s
     * after a disconnection, reconnecting for up to 120 s.
     */
    public static ClientOptions defaults() {
        return new ClientOptions(100, 100_000, Duration.ofSeconds(10), "", "falkon-client", 120,
                Duration.ofSeconds(120));
    }

    public ClientOptions withBundleSize(int n) {
        return new ClientOptions(n, Math.max(n, maxInFlight), connectTimeout, token, clientName, leaseSeconds, reconnectFor);
    }

    public ClientOptions withMaxInFlight(int n) {
        return new ClientOptions(bundleSize, n, connectTimeout, token, clientName, leaseSeconds, reconnectFor);
    }

    public ClientOptions withConnectTimeout(Duration d) {
        return new ClientOptions(bundleSize, maxInFlight, d, token, clientName, leaseSeconds, reconnectFor);
    }

    public ClientOptions withToken(String t) {
        return new ClientOptions(bundleSize, maxInFlight, connectTimeout, t, clientName, leaseSeconds, reconnectFor);
    }

    public ClientOptions withLeaseSeconds(long s) {
        return new ClientOptions(bundleSize, maxInFlight, connectTimeout, token, clientName, s, reconnectFor);
    }

    public ClientOptions withReconnectFor(Duration d) {
        return new ClientOptions(bundleSize, maxInFlight, connectTimeout, token, clientName, leaseSeconds, d);
    }

    public ClientOptions withClientName(String n) {
        return new ClientOptions(bundleSize, maxInFlight, connectTimeout, token, n, leaseSeconds, reconnectFor);
    }
}
