package io.falkon.protocol;

/** A frame or field that violates the protocol; the message names what and where. */
public class ProtocolException extends RuntimeException {
    private final ErrorCode code;

    public ProtocolException(ErrorCode code, String message) {
        super(message, null, false, false);
        this.code = code;
    }

    public ErrorCode code() {
        return code;
    }

    /** The same error with {@code prefix} added to the field path, e.g. "tasks[3]." */
    public ProtocolException within(String prefix) {
        return new ProtocolException(code, prefix + getMessage());
    }
}
