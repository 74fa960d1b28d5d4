package io.falkon.protocol.auth;

/**
 * How the token travels over HTTP, for every HTTP listener (the WS interface, the executors' peer
 * cache servers, metrics and the dashboard): {@code Authorization: Bearer TOKEN} (what Prometheus
 * and most tools send), or {@code X-Falkon-Token: TOKEN}. One definition, so that every listener
 * accepts the same headers and every client sends the same one.
 */
public final class HttpAuth {
    /** The header clients send: {@code Authorization}. */
    public static final String AUTHORIZATION = "Authorization";
    /** The alternative header, for tools that reserve {@code Authorization} for something else. */
    public static final String TOKEN_HEADER = "X-Falkon-Token";
    /** The {@code WWW-Authenticate} value of a 401 answer. */
    public static final String CHALLENGE = "Bearer realm=\"falkon\"";

    private HttpAuth() {
    }

    /** The {@code Authorization} header value that presents {@code token}. */
    public static String bearer(Token token) {
        return "Bearer " + token.value();
    }

    /**
     * The token a request presents, given its {@code Authorization} and {@code X-Falkon-Token}
     * header values (either may be null); null when it presents none.
     */
    public static String presented(String authorization, String tokenHeader) {
        if (authorization != null) {
            String a = authorization.strip();
            if (a.regionMatches(true, 0, "Bearer ", 0, 7)) {
                return a.substring(7).strip();
            }
        }
        return tokenHeader == null ? null : tokenHeader.strip();
    }
}
