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
 */
public record ClientOptions(int bundleSize, int maxInFlight, Duration connectTimeout, String token,
                            String clientName) {

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
    }

    /** Bundles of 100, 100,000 tasks in flight, 10 s connect timeout, no token. */
    public static ClientOptions defaults() {
        return new ClientOptions(100, 100_000, Duration.ofSeconds(10), "", "falkon-client");
    }

    public ClientOptions withBundleSize(int n) {
        return new ClientOptions(n, Math.max(n, maxInFlight), connectTimeout, token, clientName);
    }

    public ClientOptions withMaxInFlight(int n) {
        return new ClientOptions(bundleSize, n, connectTimeout, token, clientName);
    }

    public ClientOptions withConnectTimeout(Duration d) {
        return new ClientOptions(bundleSize, maxInFlight, d, token, clientName);
    }

    public ClientOptions withToken(String t) {
        return new ClientOptions(bundleSize, maxInFlight, connectTimeout, t, clientName);
    }

    public ClientOptions withClientName(String n) {
        return new ClientOptions(bundleSize, maxInFlight, connectTimeout, token, n);
    }
}
