package io.falkon.datacache;

import io.falkon.datacache.fetch.Fetcher;
import io.falkon.datacache.fetch.ObjectRef;
import io.falkon.datacache.fetch.PermanentFetchException;
import io.falkon.datacache.fetch.Stamp;
import io.falkon.datacache.fetch.StoreFetcher;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Copies an object from a {@link Fetcher} to a file, computing its SHA-256 on the way (the record a
 * cache keeps, and serves to peers) and verifying it against what the task declared (size,
 * checksum) and, from a peer, against what the peer recorded.
 */
public final class Copy {
    /** What was copied: its size, its SHA-256 (hex), and the store file's stamp (or null). */
    public record Copied(long size, String sha256, Stamp stamp) {
    }

    private Copy() {
    }

    /**
     * Copies {@code ref} from {@code from} into the new file {@code out}.
     *
     * @throws PermanentFetchException if the store's copy is missing or is not what the task declared
     * @throws IOException         if it cannot be read, or a peer's copy does not match
     */
    public static Copied verified(Fetcher from, ObjectRef ref, Path out) throws IOException {
        MessageDigest sha = digest("SHA-256");
        MessageDigest declared = ref.checksum().startsWith("md5:") ? digest("MD5") : null;
        Fetcher.Opened opened = from.open(ref);
        long n;
        try (InputStream raw = opened.in();
             InputStream hashed = new DigestInputStream(raw, sha);
             InputStream in = declared == null ? hashed : new DigestInputStream(hashed, declared);
             OutputStream o = Files.newOutputStream(out)) {
            n = in.transferTo(o);
        }
        String sha256 = HexFormat.of().formatHex(sha.digest());
        // what the store holds is what every executor would get: a mismatch there is permanent
        boolean store = from instanceof StoreFetcher;
        if (ref.size() >= 0 && n != ref.size()) {
            throw mismatch(store, "got " + n + " bytes from " + from.describe(ref) + ", the task declared "
                    + ref.size());
        }
        if (!ref.checksum().isEmpty()) {
            int colon = ref.checksum().indexOf(':');
            String want = ref.checksum().substring(colon + 1).toLowerCase();
            String got = declared == null ? sha256 : HexFormat.of().formatHex(declared.digest());
            if (!got.equals(want)) {
                throw mismatch(store, "checksum mismatch from " + from.describe(ref) + ": "
                        + ref.checksum().substring(0, colon) + " " + got + ", the task declared " + want);
            }
        }
        if (opened.holderSha256() != null && !opened.holderSha256().equalsIgnoreCase(sha256)) {
            throw new IOException(from.describe(ref) + " sent bytes that do not match its own record of "
                    + ref.id() + " (sha256 " + sha256 + ", recorded " + opened.holderSha256() + ")");
        }
        return new Copied(n, sha256, opened.stamp());
    }

    private static IOException mismatch(boolean permanent, String message) {
        return permanent ? new PermanentFetchException(message) : new IOException(message);
    }

    /** The SHA-256 (hex) of a file. */
    public static String sha256(Path file) throws IOException {
        return hex(file, "SHA-256");
    }

    /** The digest ({@code SHA-256}, {@code MD5}) of a file, in hex. */
    public static String hex(Path file, String algorithm) throws IOException {
        MessageDigest d = digest(algorithm);
        try (InputStream in = new DigestInputStream(Files.newInputStream(file), d)) {
            in.transferTo(OutputStream.nullOutputStream());
        }
        return HexFormat.of().formatHex(d.digest());
    }

    private static MessageDigest digest(String alg) {
        try {
            return MessageDigest.getInstance(alg);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(alg + " is missing from this JVM", e);
        }
    }
}
