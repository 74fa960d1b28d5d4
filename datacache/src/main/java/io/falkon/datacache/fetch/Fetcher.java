package io.falkon.datacache.fetch;


import java.io.IOException;
import java.io.InputStream;

/** Opens an object's bytes somewhere: the shared store, or a peer's cache. */
public interface Fetcher {

    /**
     * An object opened for reading.
     *
     * @param in           its bytes
     * @param holderSha256 the SHA-256 (hex) its holder recorded when it got the object (a peer), or
     *                     null: the bytes must match it
     * @param stamp        the store file's size and modification time before reading (for
     *                     revalidation), or null when the source is not a file
     */
    record Opened(InputStream in, String holderSha256, Stamp stamp) {
    }

    /**
     * Opens the object for reading.
     *
     * @throws PermanentFetchException if the shared store does not have it as the task describes it
     * @throws IOException             if it cannot be read (a peer that no longer has it, ...)
     */
    Opened open(ObjectRef ref) throws IOException;

    /** Where it reads from, for messages. */
    String describe(ObjectRef ref);
}
