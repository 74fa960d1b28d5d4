package io.falkon.dispatcher.ws;

/**
 * A refused WS call: becomes a SOAP fault whose reason is the message, with the code Client
 * (SOAP 1.2: Sender) when the request was wrong, Server (Receiver) when the service could not do it.
 */
final class WsFault extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final boolean callersFault;

    private WsFault(String message, boolean callersFault) {
        super(message, null, false, false);
        this.callersFault = callersFault;
    }

    static WsFault client(String message) {
        return new WsFault(message, true);
    }

    static WsFault server(String message) {
        return new WsFault(message, false);
    }

    boolean callersFault() {
        return callersFault;
    }
}
