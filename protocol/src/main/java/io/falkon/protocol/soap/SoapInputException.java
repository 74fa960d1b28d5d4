package io.falkon.protocol.soap;

/**
 * A message of the Web Services interface that is well-formed XML but not what the WSDL allows;
 * the text names the element (and the task) that is wrong, and becomes the SOAP fault's reason.
 */
public final class SoapInputException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public SoapInputException(String message) {
        super(message);
    }
}
