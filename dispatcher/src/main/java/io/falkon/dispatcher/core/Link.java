package io.falkon.dispatcher.core;

import io.falkon.protocol.Message;

/**
 * One connection as the scheduler sees it: somewhere to send messages. The scheduler calls
 * {@link #enqueue} any number of times during a batch and {@link #flush} once at its end, so a
 * transport can write a whole batch with one system call. All methods are called on the
 * scheduler thread only.
 */
public interface Link {

    /** Buffers a message; returns {@code true} if the buffer was empty (the link just became dirty). */
    boolean enqueue(Message message);

    /** Sends everything buffered. */
    void flush();

    /** Sends {@code error} (if not null) after everything buffered, then closes the connection. */
    void close(Message.ErrorMessage error);

    /** The peer's address, for logs and status. */
    String remote();
}
