package io.falkon.datacache.fetch;

import io.falkon.datacache.ObjectRef;

import java.io.IOException;
import java.io.InputStream;

/** Opens an object's bytes somewhere: the shared store, or a peer's cache. */
public interface Fetcher {

    /**
     * Opens the object for reading.
     *
     * @throws java.io.FileNotFoundException if it is not there
     * @throws IOException                   if it cannot be read
     */
    InputStream open(ObjectRef ref) throws IOException;

    /** Where it reads from, for messages. */
    String describe(ObjectRef ref);
}
