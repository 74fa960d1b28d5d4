package io.falkon.datacache;

/** An object could not be obtained from anywhere; the message says what was tried and why it failed. */
public class FetchException extends Exception {
    public FetchException(String message) {
        super(message);
    }

    public FetchException(String message, Throwable cause) {
        super(message, cause);
    }
}
