package io.falkon.datacache;

import io.falkon.datacache.fetch.Fetcher;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** Copies an object from a {@link Fetcher} to a file, verifying its size and checksum. */
public final class Copy {
    private Copy() {
    }

    /**
     * Copies {@code ref} from {@code from} into the new file {@code out}; returns the bytes copied.
     *
     * @throws IOException if it cannot be read, or its size or checksum is not what {@code ref} says
     */
    public static long verified(Fetcher from, ObjectRef ref, Path out) throws IOException {
        MessageDigest digest = ref.checksum().isEmpty() ? null : digest(ref.checksum());
        long n;
        try (InputStream raw = from.open(ref);
             InputStream in = digest == null ? raw : new DigestInputStream(raw, digest);
             OutputStream o = Files.newOutputStream(out)) {
            n = in.transferTo(o);
        }
        if (ref.size() >= 0 && n != ref.size()) {
            throw new IOException("got " + n + " bytes from " + from.describe(ref) + ", expected " + ref.size());
        }
        if (digest != null) {
            int colon = ref.checksum().indexOf(':');
            String want = ref.checksum().substring(colon + 1).toLowerCase();
            String got = HexFormat.of().formatHex(digest.digest());
            if (!got.equals(want)) {
                throw new IOException("checksum mismatch from " + from.describe(ref) + ": "
                        + ref.checksum().substring(0, colon) + " " + got + ", expected " + want);
            }
        }
        return n;
    }

    private static MessageDigest digest(String checksum) {
        String alg = checksum.startsWith("sha256:") ? "SHA-256" : "MD5";
        try {
            return MessageDigest.getInstance(alg);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(alg + " is missing from this JVM", e);
        }
    }
}
