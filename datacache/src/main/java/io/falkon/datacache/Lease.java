package io.falkon.datacache;

import java.io.IOException;
import java.nio.file.Path;

/**
 * An object in use: its local path stays valid (a cached object is pinned, never evicted) until
 * {@link #close()}. Also says where the object came from this time and how many bytes moved.
 */
public interface Lease extends AutoCloseable {

    /** The object's file (or directory, when unpacked from a tar archive). Never handed to a task. */
    Path path();

    Source source();

    /** Bytes moved to get it here (0 for a local hit). */
    long bytesMoved();

    /** Bytes the object takes (unpacked, when unpacked). */
    long size();

    /** The SHA-256 (hex) recorded when the object arrived; null for an unpacked form. */
    String sha256();

    /** Whether the object stays in the cache (false: read through, too large or no room, gone on close). */
    boolean cached();

    /** Whether this lease found the cached copy stale and fetched it again. */
    boolean refetched();

    /**
     * Gives a task its own copy at {@code target}, so that nothing the task does reaches the cache's
     * copy (a read-through object is simply moved there).
     */
    void copyTo(Path target) throws IOException;

    /** Unpins the object (or deletes a read-through one). Idempotent. */
    @Override
    void close();
}
