package io.falkon.dispatcher.core;

import io.falkon.protocol.NamedResources;

import io.falkon.dispatcher.policy.ExecutorView;
import io.falkon.dispatcher.policy.QueuedTask;
import io.falkon.protocol.Execution;
import io.falkon.protocol.TaskStatus;

import java.util.Arrays;

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
    /** Re-dispatches allowed after framework failures. */
    final int retries;
    /** Runs left after failures of the task's own (a non-zero exit, a wall-time kill): --retries. */
    int retriesOnFailure;
    /** Attempts that ended in a failure of the task's own, run again: not the framework's retries. */
    int ownFailures;
    /** Higher starts first ({@link TaskQueue}); 0 unless the spec says otherwise. */
    final int priority;
    /**
     * Slots it takes on its executor at once (credits used), and memory and scratch space it needs
     * there in MiB (0: not stated).
     */
    final int cores;
    final long memoryMiB;
    final long diskMiB;
    /** Named resources (GPUs, licences) it needs of its executor, null for none: most tasks. */
    final NamedResources named;
    /** 0: none; else how long a dispatch may go without a result. */
    final long dispatchTimeoutMillis;
    int attempt;
    long dispatchedMicros;
    /** The executor running it, null while queued. */
    ExecutorState executor;
    Task prev;
    Task next;
    boolean queued;
    /** The turn it holds while queued: fair share between instances ({@link TaskQueue}); its key, and its order among equal keys. */
    long fairKey;
    long turn;
    /** Its neighbours in its instance's own order while queued (priority, then as submitted: {@link TaskQueue}). */
    Task qPrev;
    Task qNext;
    /** Executors an attempt failed on (null until one does). */
    ExecutorState[] failedOn;
    /** Input object ids and sizes (data diffusion), null for a task without inputs. */
    final String[] inputIds;
    final long[] inputSizes;
    /** What it carries as a task of a workflow (its keys, its waiting); null for a plain task. */
    DataflowNode flow;

    /** The dispatcher's own run of a producer (see {@link DataflowNode#rerun}). */
    boolean isRerun() {
        return flow != null && flow.rerun;
    }

    /** Whether it reads a temporary object of its instance. */
    boolean readsTemporary() {
        return flow != null && flow.readsTemporary;
    }
    /** It has its final result (a waiter of two keys is met again after the first one failed it). */
    boolean finished;
    /** Whether it needs more of an executor than one slot: only such tasks are fitted and reserved for. */
    boolean sized() {
        return sized; // asked per task and executor by every policy: one load, not four tests
    }

    private final boolean sized;

    /** Its place in the scheduling window of a data-aware policy, null outside it. */
    Window.Node windowNode;
    /** Monotonic tick at which its current dispatch is presumed lost, while {@link #hasDeadline}. */
    long deadlineTick;
    boolean hasDeadline;

    Task(long id, Instance instance, long clientTaskId, byte[] spec, long submittedMicros, int retries,
         long dispatchTimeoutMillis, String[] inputIds, long[] inputSizes, int priority) {
        this(id, instance, clientTaskId, spec, submittedMicros, retries, dispatchTimeoutMillis, inputIds, inputSizes,
                priority, 1, 0, 0, null);
    }

    Task(long id, Instance instance, long clientTaskId, byte[] spec, long submittedMicros, int retries,
         long dispatchTimeoutMillis, String[] inputIds, long[] inputSizes, int priority, int cores, long memoryMiB,
         long diskMiB, NamedResources named) {
        this.cores = cores;
        this.named = named;
        this.sized = cores > 1 || memoryMiB > 0 || diskMiB > 0 || named != null;
        this.memoryMiB = memoryMiB;
        this.diskMiB = diskMiB;
        this.priority = priority;
        this.inputIds = inputIds;
        this.inputSizes = inputSizes;
        this.id = id;
        this.instance = instance;
        this.clientTaskId = clientTaskId;
        this.spec = spec;
        this.submittedMicros = submittedMicros;
        this.retries = retries;
        this.dispatchTimeoutMillis = dispatchTimeoutMillis;
    }

    /**
     * Heap this task holds: the object itself (about 120 bytes with its header and fields), its
     * encoded spec as a byte array, and its input ids and sizes when it has any. Measured against a
     * heap histogram ({@code falkon bench queue}), not guessed.
     */
    long footprint() {
        DataflowNode f = flow;
        return footprint(spec, inputIds) + (f == null ? 0 : 40 + strings(f.outputIds)
                + (f.name == null ? 0 : string(f.name)) + strings(f.after));
    }

    private static long strings(String[] a) {
        if (a == null) {
            return 0;
        }
        long bytes = align(16 + 4L * a.length);
        for (String s : a) {
            bytes += string(s);
        }
        return bytes;
    }

    /** A String: its object (24 bytes) and its byte array (compact strings, Latin-1 mostly). */
    private static long string(String s) {
        return 24 + align(16 + s.length());
    }

    /**
     * The same for a task not queued yet: a SUBMIT's decoded task (its message record, spec and
     * scan) holds about as much as the {@code Task} it becomes.
     */
    static long footprint(byte[] spec, String[] inputIds) {
        long bytes = 144 + align(16 + spec.length);
        if (inputIds != null) {
            bytes += align(16 + 4L * inputIds.length) + align(16 + 8L * inputIds.length);
            for (String id : inputIds) {
                bytes += 40 + align(16 + id.length());
            }
        }
        return bytes;
    }

    private static long align(long bytes) {
        return (bytes + 7) & ~7L;
    }

    /** Whether a framework failure is retried: its own failures do not use up the framework's retries. */
    boolean canRetry() {
        return attempt - ownFailures < retries;
    }

    /** Whether this failure of the task's own is run again (using one of its --retries). */
    boolean retriesOwnFailure(Execution x) {
        if (retriesOnFailure > 0 && !x.succeeded() && (x.status() == TaskStatus.EXITED
                || x.status() == TaskStatus.TIMEOUT)) {
            retriesOnFailure--;
            ownFailures++;
            return true;
        }
        return false;
    }

    void failedOn(ExecutorState e) {
        failedOn = failedOn == null ? new ExecutorState[]{e} : Arrays.copyOf(failedOn, failedOn.length + 1);
        failedOn[failedOn.length - 1] = e;
    }

    @Override
    public boolean avoids(ExecutorView executor) {
        if (failedOn == null) {
            return false;
        }
        for (ExecutorState e : failedOn) {
            if (e == executor) {
                return true;
            }
        }
        return false;
    }

    @Override
    public long id() {
        return id;
    }

    @Override
    public long submittedMicros() {
        return submittedMicros;
    }

    @Override
    public int attempt() {
        return attempt;
    }

    @Override
    public boolean hasInputs() {
        return inputIds != null;
    }
}
