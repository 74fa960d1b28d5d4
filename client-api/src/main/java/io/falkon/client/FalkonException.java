package io.falkon.client;

import io.falkon.protocol.ErrorCode;

/** A request the dispatcher refused, or a connection that failed. */
public class FalkonException extends RuntimeException {
    private final ErrorCode code;

    public FalkonException(ErrorCode code, String message) {
        super(message);
        this.code = code;
    }

    public FalkonException(String message, Throwable cause) {
        super(message, cause);
        this.code = null;
    }

    /** The dispatcher's error code, or {@code null} for a local or connection failure. */
    public ErrorCode code() {
        return code;
    }
}
