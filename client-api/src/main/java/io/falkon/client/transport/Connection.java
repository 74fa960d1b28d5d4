package io.falkon.client.transport;

import io.falkon.protocol.Message;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * A client's connection to a dispatcher, independent of the transport underneath (TCP frames
 * now; other transports plug in behind the same interface). Every future fails with a
 * {@link io.falkon.client.FalkonException} when the dispatcher refuses or the connection breaks.
 */
public interface Connection extends AutoCloseable {

    CompletableFuture<Long> createInstance(String clientName);

    /** Submits one bundle; completes with how many tasks the dispatcher accepted. */
    CompletableFuture<Integer> submit(long instanceId, List<Message.SubmittedTask> bundle);

    /** The status document of an instance, or of the dispatcher for instance 0. */
    CompletableFuture<String> status(long instanceId);

    /** Destroys an instance; completes with the number of tasks it cancelled. */
    CompletableFuture<Integer> destroy(long instanceId);

    /** Routes the instance's results to {@code sink} (set before submitting). */
    void attach(long instanceId, ResultSink sink);

    void detach(long instanceId);

    /** A serial executor for coalescing submissions (the connection's I/O thread). */
    Executor executor();

    /** Where it is connected, for messages. */
    String address();

    @Override
    void close();
}
