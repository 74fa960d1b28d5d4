package io.falkon.client;

import io.falkon.protocol.auth.Token;
import io.falkon.protocol.auth.TokenSource;
import io.falkon.protocol.tls.Tls;

import java.time.Duration;
import java.util.Objects;

/**
 * Tuning of a {@link FalkonClient}.
 *
 * @param bundleSize     most tasks per SUBMIT message; submissions are coalesced up to this size
 * @param maxInFlight    most tasks submitted but not yet finished; {@code submit} blocks beyond it
 * @param connectTimeout how long to wait for the dispatcher to accept the connection
 * @param token          the dispatcher's token; empty: found the way every Falkon command finds it
 *                       ({@code $FALKON_TOKEN}, {@code $FALKON_TOKEN_FILE}, {@code ~/.falkon/token})
 * @param clientName     the name instances are created under (shown in status)
 * @param leaseSeconds   how long the dispatcher keeps an instance (running its tasks, keeping its results)
 *                       after this client's connection drops, so that it can re-attach; 0: not at all
 * @param reconnectFor   after losing the connection, keep dialling with back-off this long, then fail
 *                       every unfinished task ({@link Duration#ZERO}: fail at once)
 * @param tls            TLS to the dispatcher (see {@link Tls#client}), or null for plain text
 * @param failoverAfter  with several dispatchers ({@link DistributedClient}): one not heard from this
 *                       long is taken as lost, and its unfinished tasks go to the others at once
 *                       ({@link Duration#ZERO}: only when its connection gives up, after {@code reconnectFor})
 */
public record ClientOptions(int bundleSize, int maxInFlight, Duration connectTimeout, Token token,
                            String clientName, long leaseSeconds, Duration reconnectFor, Tls tls,
                            Duration failoverAfter) {

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
        Objects.requireNonNull(failoverAfter, "failoverAfter");
        if (failoverAfter.isNegative()) {
            throw new IllegalArgumentException("failoverAfter must not be negative, got " + failoverAfter);
        }
        if (leaseSeconds < 0 || leaseSeconds > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("leaseSeconds out of range: " + leaseSeconds);
        }
    }

    /**
     * Bundles of 100, 100,000 tasks in flight, 10 s connect timeout, no token, instances kept 120 s
     * after a disconnection, reconnecting for up to 120 s; with several dispatchers, failover after 5 s.
     */
    public static ClientOptions defaults() {
        return new ClientOptions(100, 100_000, Duration.ofSeconds(10), Token.none(), "falkon-client", 120,
                Duration.ofSeconds(120), null, DEFAULT_FAILOVER_AFTER);
    }

    /** A dispatcher answers a status request every half second; ten missed answers in a row is lost. */
    public static final Duration DEFAULT_FAILOVER_AFTER = Duration.ofSeconds(5);

    /** See {@link #failoverAfter()}; {@link Duration#ZERO} turns failover off. */
    public ClientOptions withFailoverAfter(Duration d) {
        return new ClientOptions(bundleSize, maxInFlight, connectTimeout, token, clientName, leaseSeconds, reconnectFor,
                tls, d);
    }

    public ClientOptions withBundleSize(int n) {
        return new ClientOptions(n, Math.max(n, maxInFlight), connectTimeout, token, clientName, leaseSeconds, reconnectFor, tls, failoverAfter);
    }

    public ClientOptions withMaxInFlight(int n) {
        return new ClientOptions(bundleSize, n, connectTimeout, token, clientName, leaseSeconds, reconnectFor, tls, failoverAfter);
    }

    public ClientOptions withConnectTimeout(Duration d) {
        return new ClientOptions(bundleSize, maxInFlight, d, token, clientName, leaseSeconds, reconnectFor, tls, failoverAfter);
    }

    /** The token to present; {@link Token#none()}: the one in the environment or ~/.falkon/token, if any. */
    public ClientOptions withToken(Token t) {
        return new ClientOptions(bundleSize, maxInFlight, connectTimeout, t, clientName, leaseSeconds, reconnectFor, tls, failoverAfter);
    }

    /** As {@link #withToken(Token)}, from its value ("": look it up). */
    public ClientOptions withToken(String t) {
        return withToken(t.isEmpty() ? Token.none() : Token.of(t));
    }

    public ClientOptions withLeaseSeconds(long s) {
        return new ClientOptions(bundleSize, maxInFlight, connectTimeout, token, clientName, s, reconnectFor, tls, failoverAfter);
    }

    public ClientOptions withReconnectFor(Duration d) {
        return new ClientOptions(bundleSize, maxInFlight, connectTimeout, token, clientName, leaseSeconds, d, tls, failoverAfter);
    }

    /** TLS to the dispatcher, e.g. {@code Tls.client(Path.of("ca.pem"))}; null for plain text. */
    public ClientOptions withTls(Tls t) {
        return new ClientOptions(bundleSize, maxInFlight, connectTimeout, token, clientName, leaseSeconds, reconnectFor, t, failoverAfter);
    }

    /** The token to present: the one given, else the one found in the environment or ~/.falkon/token. */
    public Token resolvedToken() {
        return token.required() ? token : TokenSource.system().forClient(null, null).token();
    }

    public ClientOptions withClientName(String n) {
        return new ClientOptions(bundleSize, maxInFlight, connectTimeout, token, n, leaseSeconds, reconnectFor, tls, failoverAfter);
    }
}
