package io.falkon.protocol.auth;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A token is a value: options that carry one key caches (the Swift provider keeps one connection
 * per dispatcher and options; with identity equality every job opened a connection of its own).
 */
class TokenTest {

    @Test
    void tokensWithTheSameSecretAreEqualAndHashAlike() {
        Token a = Token.of("s3cret-value");
        Token b = Token.of("s3cret-value");
        assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
        assertThat(a).isNotEqualTo(Token.of("s3cret-valuf"));
        assertThat(Token.none()).isEqualTo(Token.none()).isNotEqualTo(a);
        assertThat(a).isNotEqualTo(Token.none());
    }

    @Test
    void aTokenIsPrintableAsciiWithoutSpaces() {
        assertThat(Token.of("!~azAZ09").value()).isEqualTo("!~azAZ09");
        for (String bad : new String[] {"with space", "tab\there", "new\nline", "del\u007f", "caf\u00e9", "\u0000"}) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> Token.of(bad))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("printable ASCII");
        }
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Token.of(""))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("empty");
    }

    @Test
    void itNeverShowsItsValue() {
        assertThat(Token.of("s3cret-value").toString()).doesNotContain("s3cret");
    }

    @Test
    void aRandomTokenIs256BitsInHexAndNeverRepeats() {
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (int i = 0; i < 1000; i++) {
            String v = Token.random().value();
            assertThat(v).matches("[0-9a-f]{64}");
            assertThat(seen.add(v)).as("a repeated token").isTrue();
        }
    }

    @Test
    void randomBytesFillTheWholeArray() {
        // 64 bytes all still zero after a fill would happen once in 2^512 fills
        byte[] b = new byte[64];
        Token.randomBytes(b);
        assertThat(b).isNotEqualTo(new byte[64]);
        byte[] tail = new byte[32];
        System.arraycopy(b, 32, tail, 0, 32);
        assertThat(tail).as("the end is filled too").isNotEqualTo(new byte[32]);
    }
}
