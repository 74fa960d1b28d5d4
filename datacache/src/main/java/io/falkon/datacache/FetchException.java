package io.falkon.datacache;

import io.falkon.datacache.fetch.PermanentFetchException;

/**
 * An object could not be obtained from anywhere; the message says what was tried and why it failed.
 * {@link #permanent()} when no executor could do better (the object is not in the store, its
 * source leaves the store, the store's copy does not match what the task declared).
 */
public class FetchException extends Exception {
    private final boolean permanent;

    public FetchException(String message) {
        this(message, null, false);
    }

    public FetchException(String message, Throwable cause) {
        this(message, cause, cause instanceof PermanentFetchException);
    }

    public FetchException(String message, Throwable cause, boolean permanent) {
        super(message, cause);
        this.permanent = permanent;
    }

    public boolean permanent() {
        return permanent;
    }
}
