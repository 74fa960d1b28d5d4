package io.falkon.executor;

import io.falkon.protocol.auth.TokenSource;
import io.falkon.protocol.tls.Tls;
import picocli.CommandLine.Option;

import java.nio.file.Path;

/**
 * How a Falkon command reaches a dispatcher securely, the same in every command that dials one
 * ({@code falkon executor}, {@code submit}, {@code status}, {@code provision}): the token (see
 * {@link TokenSource} for where it is looked for) and TLS.
 */
public final class ConnectOptions {

    @Option(names = "--token-file", paramLabel = "FILE", description = "read the dispatcher's token from FILE "
            + "(default: $FALKON_TOKEN, $FALKON_TOKEN_FILE, else ~/.falkon/token)")
    Path tokenFile;

    @Option(names = "--token", paramLabel = "TOKEN", description = "the dispatcher's token itself (visible to ps: "
            + "prefer --token-file or $FALKON_TOKEN)")
    String token;

    @Option(names = "--tls-ca", paramLabel = "PEM", description = "connect over TLS, trusting the CA certificate(s) "
            + "in this PEM file")
    Path tlsCa;

    @Option(names = "--tls", description = "connect over TLS, trusting the JDK's default CAs")
    boolean tls;

    /** The token to present, and where it was found. */
    public TokenSource.Found token() {
        return TokenSource.system().forClient(token, tokenFile);
    }

    /** TLS to the dispatcher, or null for plain text. */
    public Tls tls() {
        return tlsCa != null ? Tls.client(tlsCa) : tls ? Tls.client(null) : null;
    }

    /** The CA file given, for processes started with the same options (null: none). */
    public Path tlsCa() {
        return tlsCa;
    }

    public boolean usesTls() {
        return tls || tlsCa != null;
    }
}
