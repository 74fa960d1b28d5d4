package io.falkon.transport.ws;

import io.falkon.protocol.ErrorCode;

/**
 * A refused WS call: becomes a SOAP fault whose reason is the message, with the code Client
 * (SOAP 1.2: Sender) when the request was wrong, Server (Receiver) when the service could not do it,
 * and, when the scheduler's refusal has one, the protocol's error code in the fault's detail
 * ({@code <f:errorCode>UNKNOWN_INSTANCE</f:errorCode>}) for programs to act on.
 */
final class WsFault extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final boolean callersFault;
    private final transient ErrorCode code;

    private WsFault(String message, boolean callersFault, ErrorCode code) {
        super(message, null, false, false);
        this.callersFault = callersFault;
        this.code = code;
    }

    static WsFault client(String message) {
        return new WsFault(message, true, null);
    }

    static WsFault server(String message) {
        return new WsFault(message, false, null);
    }

    /**
     * A refusal with the protocol's code: the service's doing for {@code SHUTTING_DOWN} and
     * {@code BUSY} (which says: the same call later, HTTP 503 with Retry-After), the caller's otherwise.
     */
    static WsFault of(ErrorCode code, String message) {
        return new WsFault(message, code != ErrorCode.SHUTTING_DOWN && code != ErrorCode.BUSY, code);
    }

    boolean retryLater() {
        return code == ErrorCode.BUSY;
    }

    /** The protocol's error code, or null. */
    ErrorCode code() {
        return code;
    }

    boolean callersFault() {
        return callersFault;
    }
}
