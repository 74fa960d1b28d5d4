package io.falkon.protocol.auth;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.io.FileInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * The shared secret of a Falkon deployment: what every listener (the dispatcher's TCP and HTTP
 * ports, the executors' peer cache servers, the metrics and dashboard endpoints) requires, and what
 * every client and executor presents. Compared in constant time. {@link #none()} turns
 * authentication off, explicitly: it exists for closed networks and says so wherever it is used.
 */
public final class Token {
    private static final Token NONE = new Token(null);

    private final byte[] secret;

    /**
     * Fills {@code bytes} from a cryptographically strong generator: the kernel's, read from
     * {@code /dev/urandom} where there is one (what the JDK's {@code NativePRNGNonBlocking} reads,
     * without setting up the JDK's security providers first: a tenth of the embedded dispatcher's
     * start), else the JDK's {@link SecureRandom}.
     */
    public static void randomBytes(byte[] bytes) {
        try (FileInputStream in = new FileInputStream(KERNEL_GENERATOR)) {
            if (in.readNBytes(bytes, 0, bytes.length) == bytes.length) {
                return;
            }
        } catch (IOException e) {
            // no such device here: the JDK's generator
        }
        Generator.RANDOM.nextBytes(bytes);
    }

    private static final String KERNEL_GENERATOR = "/dev/urandom";

    /**
     * The JDK's generator, where the kernel's cannot be read, made on first use: the operating
     * system's by name, else the DRBG. Asked for by name, because {@code new SecureRandom()} looks
     * for the default in every security provider the JDK has, loading each one (PKCS#11, XML
     * signatures, ...), and a DRBG seeds itself by hashing, among other things, the names in the
     * temporary directory.
     */
    private static final class Generator {
        static final SecureRandom RANDOM = make();

        private static SecureRandom make() {
            for (String algorithm : new String[] {"NativePRNGNonBlocking", "DRBG"}) {
                try {
                    return SecureRandom.getInstance(algorithm);
                } catch (java.security.NoSuchAlgorithmException e) {
                    // not on this platform: the next
                }
            }
            return new SecureRandom();
        }
    }

    private Token(byte[] secret) {
        this.secret = secret;
    }

    /** A token with this value (not empty). */
    public static Token of(String value) {
        Objects.requireNonNull(value, "value");
        if (value.isEmpty()) {
            throw new IllegalArgumentException("a token must not be empty (use Token.none() to turn authentication off)");
        }
        // a loop, not a stream: every falkon run makes a token, and the stream classes cost it 2-3 ms
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c <= 0x20 || c >= 0x7f) {
                throw new IllegalArgumentException("a token is printable ASCII without spaces");
            }
        }
        return new Token(value.getBytes(StandardCharsets.US_ASCII));
    }

    /** A new random token: 256 bits, in hex. */
    public static Token random() {
        byte[] b = new byte[32];
        randomBytes(b);
        return of(HexFormat.of().formatHex(b));
    }

    /** No authentication: every caller is accepted. For closed networks only. */
    public static Token none() {
        return NONE;
    }

    /** Whether callers must present the token. */
    public boolean required() {
        return secret != null;
    }

    /** Whether {@code presented} may pass: always when none is required, else only the token, in constant time. */
    public boolean admits(String presented) {
        if (secret == null) {
            return true;
        }
        if (presented == null) {
            return false;
        }
        return MessageDigest.isEqual(secret, presented.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * A token derived from this one for {@code purpose} (HMAC-SHA256, in hex): what a browser keeps
     * in a cookie after presenting the real token once, so that the token itself is never stored
     * there. {@link #none()} derives none.
     */
    public Token derived(String purpose) {
        if (secret == null) {
            return NONE;
        }
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            return of(HexFormat.of().formatHex(mac.doFinal(purpose.getBytes(StandardCharsets.UTF_8))));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available", e);
        }
    }

    /** The value to present ("" when none is required). */
    public String value() {
        return secret == null ? "" : new String(secret, StandardCharsets.US_ASCII);
    }

    /**
     * Tokens are values: two with the same secret are equal (compared in constant time), so that
     * the options that carry one can key a cache of connections (the Swift provider's links).
     */
    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Token other)) {
            return false;
        }
        if (secret == null || other.secret == null) {
            return secret == other.secret;
        }
        return MessageDigest.isEqual(secret, other.secret);
    }

    @Override
    public int hashCode() {
        return secret == null ? 0 : Arrays.hashCode(secret);
    }

    @Override
    public String toString() {
        return secret == null ? "Token[none]" : "Token[****]"; // never the value
    }
}
