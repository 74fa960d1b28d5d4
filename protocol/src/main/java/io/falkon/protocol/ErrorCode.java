package io.falkon.protocol;

/** {@code ERROR.code} values. Protocol errors close the connection; request errors do not. */
public enum ErrorCode {
    MALFORMED(1, true),
    UNSUPPORTED_VERSION(2, true),
    UNAUTHORIZED(3, true),
    UNEXPECTED_MESSAGE(4, true),
    FRAME_TOO_LARGE(5, true),
    HANDSHAKE_TIMEOUT(6, true),
    UNKNOWN_INSTANCE(10, false),
    INVALID_TASK(11, false),
    DUPLICATE_EXECUTOR(12, true),
    SHUTTING_DOWN(13, false),
    /** Over its memory budget the dispatcher queued nothing of a bundle: send it again later. */
    BUSY(14, false),
    /** A code this implementation does not know (decoded from a newer peer). */
    UNKNOWN(0, true);

    private final int code;
    private final boolean closesConnection;

    ErrorCode(int code, boolean closesConnection) {
        this.code = code;
        this.closesConnection = closesConnection;
    }

    public int code() {
        return code;
    }

    public boolean closesConnection() {
        return closesConnection;
    }

    public static ErrorCode of(int code) {
        for (ErrorCode c : values()) {
            if (c.code == code && c != UNKNOWN) {
                return c;
            }
        }
        return UNKNOWN;
    }
}
