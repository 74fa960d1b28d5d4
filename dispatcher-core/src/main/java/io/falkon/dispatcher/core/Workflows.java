package io.falkon.dispatcher.core;

import io.falkon.protocol.DataCodec;
import io.falkon.protocol.Execution;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.ExtTags;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpecCodec;
import io.falkon.protocol.TaskStatus;

import java.util.ArrayDeque;
import java.util.List;

/**
 * The workflow layer (seed 004's AME/AMFS, docs/workflows.md): what a task of a workflow does on
 * each event beyond what every task does. The handlers call it once per event that concerns such a
 * task (a result, a retry, a lost executor, a final outcome, a cancelled instance) and it answers
 * through its instance's {@link Dataflow} (the keys, the waiting tasks) and the {@link
 * Intermediates} (temporary objects, their holders, their producers run again). A plain task
 * ({@code Task.flow} null) passes every call at once.
 */
final class Workflows {
    /** How it ends the tasks a producer's result settles: {@link Outcomes}. */
    interface Ending {
        void complete(Task t, String executorId, Execution x);
    }

    private final Core core;
    private final Intermediates intermediates;
    private final Ending ending;
    /** Producers whose results must still reach their subscribers: a worklist, not recursion (chains are long). */
    private final ArrayDeque<Task> producers = new ArrayDeque<>();
    private final ArrayDeque<Execution> producerResults = new ArrayDeque<>();
    private boolean cascading;

    Workflows(Core core, Ending ending, Intermediates.Completion completion) {
        this.core = core;
        this.ending = ending;
        this.intermediates = new Intermediates(core.ledger, core.pool.index(), core.outbox, completion);
    }

    /** Producers run again because what they made was lost. */
    long reruns() {
        return intermediates.reruns();
    }

    /**
     * Why a bundle cannot join its instance's dataflow, naming the first task at fault, or null: a
     * task declares an object id or a name another task already has, or runs {@code after} a name
     * no task before it has. Checked whole, before anything of the bundle is queued.
     */
    static String problem(Instance in, List<Message.SubmittedTask> tasks, TaskSpecCodec.Scan[] scans) {
        Dataflow.Declared declared = null;
        Dataflow df = in.dataflow;
        for (int i = 0, n = tasks.size(); i < n; i++) {
            TaskSpecCodec.Scan s = scans[i];
            if (!s.produces() && s.after() == null) {
                continue;
            }
            if (declared == null) {
                declared = new Dataflow.Declared();
            }
            String problem = (df == null ? Dataflow.EMPTY : df).problem(s.outputIds(), s.name(), s.after(), declared);
            if (problem != null) {
                return "task " + i + " of the bundle (clientTaskId " + Long.toUnsignedString(tasks.get(i).clientTaskId())
                        + "): " + problem;
            }
        }
        return null;
    }

    /**
     * A result of {@code t} came from {@code e}: what it held is recorded, what it made is where the
     * tasks it releases go. Returns true when the task is handled here: a temporary input it read
     * was lost, and it waits for it to be made again.
     */
    boolean resulted(Task t, ExecutorState e, Execution x) {
        DataflowNode f = t.flow;
        if (f == null) {
            return false;
        }
        if (x.succeeded() && f.temporary != null) {
            intermediates.produced(t, e, x);
        }
        if (x.status() == TaskStatus.FETCH_FAILED && f.readsTemporary
                && intermediates.awaitMissing(t, e, core.nowMicros)) {
            return true;
        }
        if (x.succeeded() && f.outputIds != null && e.cachePeer != null && core.ledger.window() != null) {
            // its outputs are in its cache now (the CACHE_UPDATE saying so may come later): the tasks
            // it releases go where they are (seed 004's pipeline pattern)
            for (String id : f.outputIds) {
                core.pool.index().add(e, id, 0);
            }
        }
        return false;
    }

    /** {@code t} is to run again after failing on {@code e}: true when it waits instead for a lost temporary input. */
    boolean retrying(Task t, ExecutorState e) {
        return t.readsTemporary() && intermediates.awaitMissing(t, e, core.nowMicros);
    }

    /** {@code e} left: what it held for readers is made again (before its tasks are retried: they may need it). */
    void executorLost(ExecutorState e) {
        intermediates.holderLost(e, core.nowMicros);
    }

    /** The instance is gone: everything held for it is let go. */
    void forget(Instance in) {
        intermediates.forget(in);
    }

    /**
     * {@code t} has its final outcome (already delivered): it is no longer a reader of what it read,
     * and a producer's result goes on to the tasks waiting for its keys (after its own result: a
     * producer's result comes before what it does to its dependants).
     */
    void finished(Task t, Execution x) {
        DataflowNode f = t.flow;
        if (f == null) {
            return;
        }
        Instance in = t.instance;
        if (f.readsTemporary) {
            in.dataflow.read(t, -1, intermediates::unneeded);
        }
        if (f.produces()) {
            producers.add(t);
            producerResults.add(x);
            if (!cascading) {
                cascade();
            }
        }
    }

    /**
     * Hands each finished producer's keys to their subscribers: a success releases those that miss
     * nothing more to the queue; a failure ends them DEPENDENCY_FAILED (naming the task that failed
     * first upstream), a cancellation CANCELLED, and their own keys fail in turn. Each subscriber is
     * touched once per key: O(dependants).
     */
    private void cascade() {
        cascading = true;
        try {
            Task p;
            while ((p = producers.poll()) != null) {
                Execution x = producerResults.poll();
                boolean ok = x.succeeded();
                boolean cancelled = x.status() == TaskStatus.CANCELLED;
                DataCodec.Dependency upstream = x.status() == TaskStatus.DEPENDENCY_FAILED ? DataCodec.dependencyOf(x) : null;
                long first = upstream != null ? upstream.producer() : p.clientTaskId;
                Instance in = p.instance;
                if (in.retainsResults() && !in.gone && !p.isRerun()) {
                    core.journal.produced(in.id, p.flow.outputIds, p.flow.name, ok, first);
                }
                in.dataflow.produced(p, ok, first, key -> {
                    Task[] subscribers = key.take();
                    if (subscribers == null) {
                        return;
                    }
                    for (Task w : subscribers) {
                        if (w == null) {
                            break;
                        }
                        if (w.finished) {
                            continue; // failed meanwhile by another key it needed
                        }
                        if (ok) {
                            core.ledger.produced(w);
                        } else {
                            core.ledger.leaveWaiting(w);
                            ending.complete(w, "", cancelled ? Execution.of(TaskStatus.CANCELLED, "not run: a task "
                                    + "it needs was cancelled", core.nowMicros) : dependencyExecution(key, first));
                        }
                    }
                });
            }
        } finally {
            cascading = false;
        }
    }

    /** Ends every waiting task of the instance (cancelled with it, or halted: they never started). */
    void cancelWaiting(Instance in, Execution cancelled) {
        Dataflow df = in.dataflow;
        while (df != null && df.waitingTasks() > 0) {
            Task t = df.firstWaiting();
            core.ledger.leaveWaiting(t);
            ending.complete(t, "", cancelled);
        }
    }

    /** Ends the waiting tasks of the instance that {@code which} accepts; returns how many. */
    int cancelWaitingIf(Instance in, java.util.function.Predicate<Task> which, Execution cancelled) {
        Dataflow df = in.dataflow;
        if (df == null || df.waitingTasks() == 0) {
            return 0;
        }
        List<Task> chosen = new java.util.ArrayList<>();
        df.forEachWaiting(t -> {
            if (which.test(t)) {
                chosen.add(t);
            }
        });
        int n = 0;
        for (Task t : chosen) {
            if (!t.finished) { // not ended meanwhile, by another one's cancellation
                core.ledger.leaveWaiting(t);
                ending.complete(t, "", cancelled);
                n++;
            }
        }
        return n;
    }

    /** The result of a task that never ran because {@code key} failed, naming the task that failed first. */
    Execution dependencyExecution(Dataflow.Key key, long producer) {
        String what = key.isName ? "to run after '" + key.id + "'" : key.lost ? "its temporary input '" + key.id
                + "', which was lost and made again" : "its input '" + key.id + "'";
        List<ExtField> ext = List.of(new ExtField(ExtTags.DEPENDENCY,
                DataCodec.encodeDependency(new DataCodec.Dependency(producer, key.what()))));
        return new Execution(TaskStatus.DEPENDENCY_FAILED, -1, 0, core.nowMicros, core.nowMicros, new byte[0],
                new byte[0], "not run: it needs " + what + ", and task " + Long.toUnsignedString(producer)
                + " did not succeed", ext);
    }
}
