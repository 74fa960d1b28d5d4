package io.falkon.dispatcher.ws;

/**
 * A refused WS call: becomes a SOAP fault whose reason is the message, with the code Client
 * (SOAP 1.2: Sender) when the request was wrong, Server (Receiver) when the service could not do it.
 */
final class WsFault extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final boolean callersFault;
    private final boolean retryLater;

    private WsFault(String message, boolean callersFault, boolean retryLater) {
        super(message, null, false, false);
        this.callersFault = callersFault;
        this.retryLater = retryLater;
    }

    static WsFault client(String message) {
        return new WsFault(message, true, false);
    }

    static WsFault server(String message) {
        return new WsFault(message, false, false);
    }

    /** The service cannot take the call now but will later: HTTP 503 with Retry-After. */
    static WsFault busy(String message) {
        return new WsFault(message, false, true);
    }

    boolean retryLater() {
        return retryLater;
    }

    boolean callersFault() {
        return callersFault;
    }
}
