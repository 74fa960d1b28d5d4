package io.falkon.dispatcher.admission;

/**
 * A listener in front of the admission stage (TCP, WS, the monitor): what the dispatcher, their
 * composition root, needs of each to start and stop them in order. Each transport's {@code bind}
 * either returns one that listens or throws having released what it took; the dispatcher closes
 * those it started in the reverse order, on a failed start as on a stop.
 */
public interface ServerTransport extends AutoCloseable {

    /** {@code tcp}, {@code ws}, {@code http}: for logs. */
    String name();

    /** The port it listens on. */
    int port();

    /** Closes its listener and its connections and stops its threads; returns when they have stopped. */
    @Override
    void close();
}
