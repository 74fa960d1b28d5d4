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
    void itNeverShowsItsValue() {
        assertThat(Token.of("s3cret-value").toString()).doesNotContain("s3cret");
    }
}
