package io.falkon.client;

import io.falkon.protocol.TaskSpec;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Where a client's tasks go and their results come from: an {@link Instance} on one dispatcher, or a
 * {@link DistributedInstance} spread over several. What the command line and the workflow
 * providers need of either.
 */
public interface TaskInstance extends AutoCloseable {
    /** Submits one task; blocks while too many are unfinished (backpressure). */
    CompletableFuture<TaskResult> submit(TaskSpec spec);

    /** Calls {@code listener} with every result as it arrives, besides the futures. */
    void onResult(Consumer<TaskResult> listener);

    /**
     * Calls {@code listener} with every task the dispatcher refused (invalid there, e.g. over its
     * {@code --max-task-bytes}): its id (the order of submission, from 0, as results are numbered)
     * and why; its future fails with the same {@link FalkonException} ({@code INVALID_TASK}). The
     * other tasks of its bundle run.
     */
    void onRefused(BiConsumer<Long, FalkonException> listener);

    /** Tasks submitted and not yet finished. */
    int outstanding();

    /** Waits until every task submitted so far has a result (or cannot have one: see {@link #lostCause()}). */
    void awaitAll() throws InterruptedException;

    /** Waits up to {@code timeout}; whether every task submitted so far finished. */
    boolean awaitAll(Duration timeout) throws InterruptedException;

    /** Why tasks were lost for good (their futures failed with it), or null. */
    FalkonException lostCause();

    /**
     * Starts nothing more: every task submitted so far is sent, then those not yet started end
     * {@code CANCELLED} (their results say so) while the running ones finish and deliver as usual;
     * later submissions are refused. Returns how many were cancelled.
     */
    int halt();

    /** Ends the instance: unfinished tasks are cancelled. */
    @Override
    void close();
}
