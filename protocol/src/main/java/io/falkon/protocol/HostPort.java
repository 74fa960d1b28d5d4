package io.falkon.protocol;

/** A dispatcher address, {@code host:port} (or {@code tcp://host:port}, or {@code host} for the default port). */
public record HostPort(String host, int port) {

    /** @throws IllegalArgumentException naming what is wrong with {@code address} */
    public static HostPort parse(String address) {
        String a = address.trim();
        if (a.startsWith("tcp://")) {
            a = a.substring(6);
        }
        if (a.endsWith("/")) {
            a = a.substring(0, a.length() - 1);
        }
        if (a.isEmpty() || a.contains("/")) {
            throw new IllegalArgumentException("not a dispatcher address: '" + address + "' (expected host:port)");
        }
        int colon = a.lastIndexOf(':');
        if (colon < 0) {
            return new HostPort(a, Protocol.DEFAULT_PORT);
        }
        String host = a.substring(0, colon);
        try {
            int port = Integer.parseInt(a.substring(colon + 1));
            if (port < 1 || port > 65535 || host.isEmpty()) {
                throw new NumberFormatException();
            }
            return new HostPort(host, port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a dispatcher address: '" + address
                    + "' (expected host:port with a port in 1..65535)");
        }
    }

    @Override
    public String toString() {
        return host + ":" + port;
    }
}
