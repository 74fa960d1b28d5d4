package io.falkon.datacache.fetch;

import java.io.IOException;

/**
 * The object cannot be had as the task describes it, on any executor: it is missing from the
 * shared store, its source leaves the store root, the store's copy does not match its declared size
 * or checksum, or its archive holds what cannot be unpacked. The task is not retried.
 */
public class PermanentFetchException extends IOException {
    public PermanentFetchException(String message) {
        super(message);
    }
}
