package io.falkon.dispatcher.core;

import io.falkon.protocol.Execution;
import io.falkon.protocol.NamedResources;
import io.falkon.protocol.TaskSpecCodec;
import io.falkon.protocol.TaskStatus;

import java.util.List;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Where every accepted task is until its final result: waiting for its dependencies (in its
 * instance's {@link Dataflow}), the wait queue (and the scheduling window of a data-aware policy
 * over it), or one executor's running set with its dispatch deadline. Each
 * move between those places happens here, in one method, together with every counter it affects
 * (queued bytes, running, the instance's queued and running counts), so the counters cannot drift
 * apart as features are added. {@link Invariants} recomputes them to prove it.
 */
final class TaskLedger {
    private final TaskQueue queue = new TaskQueue();
    private final Deadlines deadlines = new Deadlines();
    /** From acceptance to first dispatch, per task (falkon_dispatch_latency_seconds). */
    private final LatencyHistogram dispatchLatency = new LatencyHistogram();
    /** The scheduling window of a data-aware policy; null for one that is not. */
    private final Window window;
    private final SchedulerConfig config;
    private long nextTaskId = 1;
    private int running;
    private long completed;
    private long succeeded;
    private long cancelled;
    private long retried;
    private long queuedBytes;
    private long runningBytes;
    /** Cores and stated memory of the queued and of the running tasks: the provisioner sizes allocations by them. */
    private long queuedCores;
    private long queuedMemoryMiB;
    private long runningCores;
    private long runningMemoryMiB;
    /** GPUs ({@code gpus} named resource) the queued and the running tasks ask for: what a provisioner asks nodes for. */
    private long queuedGpus;
    private long runningGpus;
    private int waiting;
    private long waitingBytes;

    /** Counts the queued readers of each object (data-aware policies only), or null. */
    private final Multicast multicast;

    TaskLedger(Window window, SchedulerConfig config) {
        this(window, config, null);
    }

    TaskLedger(Window window, SchedulerConfig config, Multicast multicast) {
        this.window = window;
        this.config = config;
        this.multicast = multicast;
        if (window != null) {
            queue.onSwapped(window::swapped); // an instance's tasks reseated in its turns: the window follows
        }
    }

    Window window() {
        return window;
    }

    /**
     * A newly accepted (or restored) task: queued at the tail; or, when it misses something a task
     * of its instance has not produced yet, waiting for it. Returns the task, and in {@code failed[0]}
     * the key that already failed when it can never run (the caller ends it DEPENDENCY_FAILED).
     */
    Task accept(Instance in, long clientTaskId, byte[] spec, long submittedMicros, TaskSpecCodec.Scan scan,
                Dataflow.Key[] failed) {
        int retries = scan.retries() >= 0 ? scan.retries() : config.defaultRetries();
        long wall = scan.wallTimeMillis();
        long timeout = config.dispatchTimeoutMillis() > 0 ? config.dispatchTimeoutMillis()
                : wall > 0 ? wall + config.dispatchGraceMillis() : 0;
        Task t = new Task(nextTaskId++, in, clientTaskId, spec, submittedMicros, retries, timeout, scan.inputIds(),
                scan.inputSizes(), scan.priority(), scan.cores(), scan.memoryMiB(),
                scan.diskMiB(), scan.named());
        t.retriesOnFailure = scan.retriesOnFailure();
        // the instance's first task that others can wait for gives it a dataflow
        Dataflow df = scan.produces() || scan.after() != null ? in.producing() : in.dataflow;
        if (df != null) {
            t.flow = new DataflowNode(scan.outputIds(), scan.name(), scan.after(), scan.temporary(), false);
            df.register(t);
            df.read(t, 1, null);
        }
        place(t, df, failed);
        return t;
    }

    /**
     * A run of {@code origin} (which succeeded) made by the dispatcher itself, to make again the
     * temporary objects of it that were lost. The
     * caller makes it the producer of the lost keys, then places it ({@link #place}).
     */
    Task rerun(Task origin, long nowMicros) {
        Task t = new Task(nextTaskId++, origin.instance, origin.clientTaskId, origin.spec, nowMicros, origin.retries,
                origin.dispatchTimeoutMillis, origin.inputIds, origin.inputSizes, origin.priority, origin.cores,
                origin.memoryMiB, origin.diskMiB, origin.named);
        t.flow = new DataflowNode(origin.flow.outputIds, null, null, origin.flow.temporary, true);
        Dataflow df = origin.instance.dataflow;
        df.read(t, 1, null);
        return t;
    }

    /** Queues a task, or makes it wait for the keys it misses; with a failed key it is left to the caller. */
    void place(Task t, Dataflow df, Dataflow.Key[] failed) {
        if (df != null) {
            int missing = df.subscribe(t, failed);
            if (missing < 0) {
                return; // never queued: the caller ends it
            }
            if (missing > 0) {
                df.addWaiting(t, missing);
                waiting++;
                waitingBytes += t.footprint();
                t.instance.waiting++;
                return;
            }
        }
        enqueue(t);
    }

    /**
     * A task that could not read a temporary object being made again waits for it (and any other of
     * those it misses): off its executor already, it leaves for waiting as a new attempt.
     */
    void waitAgain(Task t, int missing) {
        t.attempt++;
        t.instance.dataflow.addWaiting(t, missing);
        waiting++;
        waitingBytes += t.footprint();
        t.instance.waiting++;
    }

    private void enqueue(Task t) {
        queue.addLast(t);
        if (window != null) {
            window.queued(t);
        }
        queued(t, 1);
        t.instance.queued++;
    }

    /** One key a waiting task missed was produced: when it was the last, the task goes to the tail of the queue. */
    void produced(Task t) {
        if (t.instance.dataflow.met(t)) {
            leaveWaiting(t);
            enqueue(t);
        }
    }

    /** Takes a waiting task out of waiting for good (its dependency failed, or it is cancelled). */
    void leaveWaiting(Task t) {
        t.instance.dataflow.removeWaiting(t);
        waiting--;
        waitingBytes -= t.footprint();
        t.instance.waiting--;
    }

    /** Puts a task taken off its executor back at the head of the queue for its next attempt. */
    void requeue(Task t) {
        t.attempt++;
        retried++;
        queue.addFirst(t); // ahead of new work of its priority: it has waited already
        if (window != null) {
            window.prepended(t);
        }
        t.instance.queued++;
        queued(t, 1);
    }

    /** Moves a queued task onto {@code e} (the executor's credit is the pool's business). */
    void assign(Task t, ExecutorState e, long nowMicros, long tickMicros) {
        dequeue(t);
        if (window != null) {
            window.fill(); // the next queued task enters the window within this round
        }
        t.executor = e;
        t.dispatchedMicros = nowMicros;
        if (t.attempt == 0) {
            dispatchLatency.record(nowMicros - t.submittedMicros);
        }
        e.tasks.put(t.id, t);
        e.memoryInUseMiB += t.memoryMiB;
        e.diskInUseMiB += t.diskMiB;
        if (t.named != null) {
            e.hold(t.named, 1);
        }
        running++;
        running(t, 1);
        t.instance.running++;
        if (t.dispatchTimeoutMillis > 0) {
            deadlines.add(t, tickMicros + t.dispatchTimeoutMillis * 1000);
        }
    }

    /** Takes a task off the executor it runs on: the one place that undoes {@link #assign}. */
    void unassign(Task t) {
        ExecutorState e = t.executor;
        if (e == null) {
            throw new IllegalStateException("task " + t.id + " is not on an executor");
        }
        e.tasks.remove(t.id);
        e.memoryInUseMiB -= t.memoryMiB;
        e.diskInUseMiB -= t.diskMiB;
        if (t.named != null) {
            e.hold(t.named, -1);
        }
        deadlines.remove(t);
        running--;
        running(t, -1);
        t.instance.running--;
        t.executor = null;
    }

    /** Takes a task off the queue for an executor. */
    private void dequeue(Task t) {
        if (window != null) {
            window.removed(t); // while it is still in place: the window may need its successor
        }
        queue.dispatched(t);
        queued(t, -1);
        t.instance.queued--;
    }

    /** Counts {@code t} into ({@code sign} 1) or out of (-1) what the queued tasks hold and need. */
    private void queued(Task t, int sign) {
        if (multicast != null && t.inputIds != null) {
            multicast.queued(t, sign);
        }
        queuedBytes += sign * t.footprint();
        queuedCores += sign * t.cores;
        queuedMemoryMiB += sign * t.memoryMiB;
        if (t.named != null) {
            queuedGpus += sign * t.named.amount(NamedResources.GPUS);
        }
    }

    /** The same for the running tasks. */
    private void running(Task t, int sign) {
        runningBytes += sign * t.footprint();
        runningCores += sign * t.cores;
        runningMemoryMiB += sign * t.memoryMiB;
        if (t.named != null) {
            runningGpus += sign * t.named.amount(NamedResources.GPUS);
        }
    }

    /** Slots the running tasks take (a task of several cores takes several). */
    long runningCores() {
        return runningCores;
    }

    /** Cores and stated memory (MiB) of the queued tasks, then of the running ones; then their GPUs. */
    long[] demand() {
        return new long[]{queuedCores, queuedMemoryMiB, runningCores, runningMemoryMiB, queuedGpus, runningGpus};
    }

    /** Takes a queued task off the queue without running it: it ends here (refused). */
    void drop(Task t) {
        if (!t.queued) {
            throw new IllegalStateException("task " + t.id + " is not queued");
        }
        dequeue(t);
    }

    /** Removes every queued task of {@code in}, handing each to {@code removed} in queue order. */
    void dequeueAll(Instance in, Consumer<Task> removed) {
        dequeueIf(in, t -> true, removed);
    }

    /** Removes the queued tasks of {@code in} that {@code which} accepts, handing each to {@code removed}. */
    void dequeueIf(Instance in, Predicate<Task> which, Consumer<Task> removed) {
        if (in.queued == 0) {
            return;
        }
        queue.removeIf(in, which, t -> {
            if (window != null) {
                window.removed(t); // while it is still in place: the window may need its successor
            }
        }, t -> {
            queued(t, -1);
            in.queued--;
            removed.accept(t);
        });
    }

    /** The task has its final outcome: counted; a dependency met later no longer concerns it. */
    void finished(Task t, Execution x) {
        t.finished = true;
        if (!t.isRerun()) { // the dispatcher's own run of a producer is not one of the instance's tasks
            finished(t.instance, x);
        }
    }

    /** Counts a task's final outcome: succeeded, cancelled, or (the rest) failed. */
    void finished(Instance in, Execution x) {
        in.completed++;
        completed++;
        if (x.succeeded()) {
            in.succeeded++;
            succeeded++;
        } else if (x.status() == TaskStatus.CANCELLED) {
            in.cancelled++;
            cancelled++;
        }
    }

    /** Removes and returns the running tasks whose dispatch deadline has passed, oldest first. */
    List<Task> expired(long tickMicros) {
        return deadlines.expired(tickMicros);
    }

    Task head() {
        return queue.head();
    }

    boolean isEmpty() {
        return queue.isEmpty();
    }

    int queued() {
        return queue.size();
    }

    /** How many priorities have queued tasks. */
    int queuedPriorities() {
        return queue.levels();
    }

    /** How many queued tasks have {@code priority}. */
    int queuedAt(int priority) {
        return queue.countAt(priority);
    }

    int running() {
        return running;
    }

    long completed() {
        return completed;
    }

    long succeeded() {
        return succeeded;
    }

    long cancelled() {
        return cancelled;
    }

    long retried() {
        return retried;
    }

    long queuedBytes() {
        return queuedBytes;
    }

    /** Tasks waiting for their dependencies (not in the queue). */
    int waiting() {
        return waiting;
    }

    long waitingBytes() {
        return waitingBytes;
    }

    /** Heap held by the tasks on executors (they stay in memory until their results come back). */
    long runningBytes() {
        return runningBytes;
    }

    LatencyHistogram.Snapshot dispatchLatency() {
        return dispatchLatency.snapshot();
    }

    int deadlines() {
        return deadlines.size();
    }

    /** Every queued task matching {@code filter}, for snapshots and checks. */
    void forEachQueued(Predicate<Task> filter, Consumer<Task> action) {
        for (Task t = queue.head(); t != null; t = t.next) {
            if (filter.test(t)) {
                action.accept(t);
            }
        }
    }
}
