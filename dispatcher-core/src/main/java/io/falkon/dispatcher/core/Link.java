package io.falkon.dispatcher.core;

import io.falkon.protocol.Message;

/**
 * One connection as the scheduler sees it: somewhere to send messages. The scheduler calls
 * {@link #enqueue} any number of times during a batch and {@link #takeFlush} once at its end, so a
 * transport can write a whole batch with one system call (after the journal has made the batch
 * durable, when there is a journal). All methods are called on the scheduler thread only.
 */
public interface Link {

    /** Buffers a message; returns {@code true} if the buffer was empty (the link just became dirty). */
    boolean enqueue(Message message);

    /**
     * Takes everything buffered and returns the action that sends it (run later, from any thread,
     * in batch order), or {@code null} if nothing is buffered.
     */
    Runnable takeFlush();

    /** Sends {@code error} (if not null) after everything buffered, then closes the connection. */
    void close(Message.ErrorMessage error);

    /** The peer's address, for logs and status. */
    String remote();

    /** The peer's IP address (how other peers may reach it), e.g. {@code 10.0.0.7}. */
    String remoteHost();

    /**
     * Whether the lease of an instance this link owns runs from the owner's last request rather than
     * from the end of the connection: true for request/response transports (the WS interface), whose
     * "connection" lasts as long as the client keeps calling.
     */
    default boolean leaseRunsWhileAttached() {
        return false;
    }
}
