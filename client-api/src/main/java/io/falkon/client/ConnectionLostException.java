package io.falkon.client;

/**
 * The connection broke while a request was on its way: it may or may not have been carried out.
 * While the client is reconnecting, {@link Instance} handles this itself (it re-attaches and
 * resubmits what the dispatcher did not accept); it reaches the caller when reconnecting fails or
 * is not enabled.
 */
public class ConnectionLostException extends FalkonException {
    public ConnectionLostException(String message, Throwable cause) {
        super(message, cause);
    }
}
