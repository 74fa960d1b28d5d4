package io.falkon.datacache.fetch;

import io.falkon.datacache.fetch.ObjectRef;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What every {@link Fetcher} must do, wherever it reads (the shared store as files or over HTTP, a
 * peer's cache): give an object's exact bytes, say where it read them, vouch for them only with the
 * right digest, and fail with an {@link IOException} naming the object when it cannot. One subclass
 * per implementation, each against a real source (files, a real HTTP server, a real peer server on
 * 127.0.0.1).
 */
abstract class FetcherContract {

    /** The fetcher under test. */
    abstract Fetcher fetcher() throws Exception;

    /** Puts {@code bytes} where the fetcher reads, as object {@code id}; returns the reference a task gives. */
    abstract ObjectRef present(String id, byte[] bytes) throws Exception;

    /** A reference to an object the fetcher's source does not have. */
    abstract ObjectRef absent(String id) throws Exception;

    static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    static String sha256(byte[] b) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }

    @Test
    void opensAnObjectAndReadsExactlyItsBytes() throws Exception {
        byte[] data = bytes(300_000, 1);
        ObjectRef ref = present("obj-a", data);
        Fetcher.Opened opened = fetcher().open(ref);
        try (InputStream in = opened.in()) {
            assertThat(in.readAllBytes()).isEqualTo(data);
        }
    }

    @Test
    void anEmptyObjectIsReadAsEmpty() throws Exception {
        ObjectRef ref = present("obj-empty", new byte[0]);
        try (InputStream in = fetcher().open(ref).in()) {
            assertThat(in.readAllBytes()).isEmpty();
        }
    }

    @Test
    void aDigestItVouchesForIsTheDigestOfTheBytes() throws Exception {
        byte[] data = bytes(70_000, 2);
        Fetcher.Opened opened = fetcher().open(present("obj-d", data));
        try (InputStream in = opened.in()) {
            in.readAllBytes();
        }
        if (opened.holderSha256() != null) {
            assertThat(opened.holderSha256()).isEqualToIgnoringCase(sha256(data));
        }
    }

    @Test
    void twoObjectsOpenedTogetherKeepTheirOwnBytes() throws Exception {
        byte[] a = bytes(100_000, 3);
        byte[] b = bytes(100_001, 4);
        Fetcher f = fetcher();
        Fetcher.Opened first = f.open(present("obj-1", a));
        Fetcher.Opened second = f.open(present("obj-2", b));
        try (InputStream in1 = first.in(); InputStream in2 = second.in()) {
            assertThat(in2.readAllBytes()).isEqualTo(b);
            assertThat(in1.readAllBytes()).isEqualTo(a);
        }
    }

    @Test
    void anObjectItsSourceLacksFailsWithAnIoErrorNamingIt() throws Exception {
        ObjectRef ref = absent("obj-missing");
        assertThatThrownBy(() -> fetcher().open(ref).in().close()).isInstanceOf(IOException.class)
                .hasMessageContaining("obj-missing");
    }

    @Test
    void itSaysWhereItReads() throws Exception {
        ObjectRef ref = present("obj-w", bytes(10, 5));
        assertThat(fetcher().describe(ref)).isNotBlank();
    }
}
