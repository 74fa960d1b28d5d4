package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.QueuedTask;

/**
 * A task inside the dispatcher, from acceptance to delivery of its result. The spec stays in its
 * encoded form: the dispatcher forwards it and never needs to decode it. Also a node of
 * {@link TaskQueue} (the links make removal from the middle O(1) for window-based policies).
 */
final class Task implements QueuedTask {
    final long id;
    final Instance instance;
    final long clientTaskId;
    final byte[] spec;
    final long submittedMicros;
    int attempt;
    long dispatchedMicros;
    /** The executor running it, null while queued. */
    ExecutorState executor;
    Task prev;
    Task next;
    boolean queued;

    Task(long id, Instance instance, long clientTaskId, byte[] spec, long submittedMicros) {
        this.id = id;
        this.instance = instance;
        this.clientTaskId = clientTaskId;
        this.spec = spec;
        this.submittedMicros = submittedMicros;
    }

    @Override
    public long id() {
        return id;
    }

    @Override
    public QueuedTask next() {
        return next;
    }

    @Override
    public long submittedMicros() {
        return submittedMicros;
    }

    @Override
    public int attempt() {
        return attempt;
    }
}
