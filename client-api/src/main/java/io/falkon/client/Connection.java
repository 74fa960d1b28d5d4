package io.falkon.client;

import io.falkon.protocol.Message;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * A client's connection to a dispatcher, independent of the transport underneath (TCP frames, or
 * SOAP over HTTP). Every future fails with a {@link FalkonException} when the dispatcher refuses, or
 * with a {@link ConnectionLostException} when the connection breaks.
 *
 * <p><b>Threads.</b> Every future this interface returns completes on {@link #executor()}, the
 * connection's serial I/O thread, and every {@link ResultSink} call is made there too: what an
 * {@code Instance} keeps "on the I/O thread only" is touched by one thread whatever the transport.
 * (Only after {@link #close()} do calls fail at once, on the calling thread.)
 */
public interface Connection extends AutoCloseable {

    /** Creates an instance that outlives this connection by {@code leaseSeconds} (0: not at all). */
    CompletableFuture<Message.InstanceCreated> createInstance(String clientName, long leaseSeconds);

    /** Submits one bundle; completes with how many tasks the dispatcher accepted. */
    CompletableFuture<Integer> submit(long instanceId, List<Message.SubmittedTask> bundle);

    /** The status document of an instance, or of the dispatcher for instance 0. */
    CompletableFuture<String> status(long instanceId);

    /** Destroys an instance; completes with the number of tasks it cancelled. */
    CompletableFuture<Integer> destroy(long instanceId);

    /**
     * Halts an instance: nothing more of it starts (its tasks not yet dispatched are cancelled, the
     * running ones finish); completes with the number cancelled.
     */
    CompletableFuture<Integer> halt(long instanceId);

    /**
     * Cancels some of an instance's tasks, by the ids this client gave them; completes with how many
     * of them were unfinished (their CANCELLED results follow as any result).
     */
    CompletableFuture<Integer> cancelTasks(long instanceId, long[] taskIds);

    /** Takes over an instance (after a reconnect, or given its secret); its unacknowledged results follow. */
    CompletableFuture<Message.Attached> attach(long instanceId, String secret);

    /**
     * Takes over an instance whose tasks {@code moved} this client sent to other dispatchers while
     * this one was away (failover): the dispatcher cancels them in the same step as the take-over,
     * before it could start any of them again (ATTACH_MOVED). Here: ATTACH, then CANCEL_TASKS, for a
     * transport whose dispatcher cannot be lost and come back on its own (none does failover over it).
     */
    default CompletableFuture<Message.Attached> attachMoved(long instanceId, String secret, long[] moved) {
        return attach(instanceId, secret).thenCompose(a -> cancelTasks(instanceId, moved).thenApply(n -> a));
    }

    /** Tells the dispatcher the instance's results up to {@code upToSeq} have arrived (no reply). */
    void ack(long instanceId, long upToSeq);

    /** Routes the instance's results and connection events to {@code sink} (set before submitting). */
    void route(long instanceId, ResultSink sink);

    /** Stops routing the instance's results. */
    void unroute(long instanceId);

    /** A serial executor for coalescing submissions (the connection's I/O thread). */
    Executor executor();

    /**
     * The most encoded task bytes one SUBMIT may carry ({@link #PER_TASK_OVERHEAD} counted per
     * task): a bundle is cut before it would outgrow what the dispatcher reads in one message.
     */
    int maxBundleBytes();

    /** What a task costs in a SUBMIT beyond its encoded spec (its id and length), rounded up. */
    int PER_TASK_OVERHEAD = 16;

    /** Whether the connection is up now (false while reconnecting, and after it failed or closed). */
    boolean connected();

    /** Where it is connected, for messages. */
    String address();

    @Override
    void close();
}
