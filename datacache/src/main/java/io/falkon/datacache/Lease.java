package io.falkon.datacache;

import java.nio.file.Path;

/**
 * A cached object in use: its local path stays valid (the object is pinned, never evicted) until
 * {@link #close()}. Also says where the object came from this time and how many bytes moved.
 */
public interface Lease extends AutoCloseable {

    /** The object's file (or directory, when unpacked from a tar archive). */
    Path path();

    Source source();

    /** Bytes moved to get it here (0 for a local hit). */
    long bytesMoved();

    /** Bytes the object takes in the cache (unpacked, when unpacked). */
    long size();

    /** Unpins the object. Idempotent. */
    @Override
    void close();
}
