package io.falkon.dispatcher.core;

import io.falkon.protocol.Execution;
import io.falkon.protocol.LogSafe;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

/**
 * How a task ends, whichever event ends it: its final outcome counted, journaled and delivered (and
 * kept until acknowledged), then handed to the {@link Workflows} layer for what it releases; and an
 * instance's unfinished work cancelled at once (queued, waiting and running).
 */
final class Outcomes implements Workflows.Ending, Intermediates.Completion {
    private static final Logger log = LoggerFactory.getLogger(Outcomes.class);

    private final Core core;
    private final Workflows workflows;

    Outcomes(Core core) {
        this.core = core;
        this.workflows = new Workflows(core, this, this);
    }

    Workflows workflows() {
        return workflows;
    }

    /** The task's final outcome: counted, journaled, delivered (and kept until acknowledged). */
    @Override
    public void complete(Task t, String executorId, Execution x) {
        Instance in = t.instance;
        core.ledger.finished(t, x);
        boolean rerun = t.isRerun();
        if (rerun && !x.succeeded()) { // the dispatcher's own run: its keys are settled, nothing is delivered
            log.warn("task {} run again to make its lost temporary outputs did not succeed: {} {}",
                    Long.toUnsignedString(t.clientTaskId), x.status(), LogSafe.text(x.detail()));
        }
        if (!in.gone && !rerun) {
            Message.DeliveredResult r = new Message.DeliveredResult(t.clientTaskId,
                    in.retainsResults() ? in.takeSeq() : 0, t.attempt, executorId, t.submittedMicros,
                    t.dispatchedMicros, core.nowMicros, x);
            if (in.retainsResults()) {
                core.journal.completed(in.id, r);
                core.instances.retain(in, r);
            }
            if (in.owner != null) {
                core.outbox.deliver(in, r);
            }
        }
        workflows.finished(t, x);
    }

    /** {@link Intermediates}' way to end a task: as any other, without an executor to name. */
    @Override
    public void complete(Task t, Execution x) {
        complete(t, "", x);
    }

    @Override
    public Execution dependencyFailed(Dataflow.Key key) {
        return workflows.dependencyExecution(key, key.failedProducer);
    }

    /** A task that can never run: a key it needs failed (its producer did not succeed). */
    void dependencyFailed(Task t, Dataflow.Key key) {
        complete(t, "", dependencyFailed(key));
    }

    /** Cancels every unfinished task of {@code in}; returns how many. */
    int cancel(Instance in, String reason) {
        long before = in.cancelled; // tasks waiting for a cancelled one are cancelled with it: all counted
        Execution cancelled = Execution.of(TaskStatus.CANCELLED, reason, core.nowMicros);
        core.ledger.dequeueAll(in, t -> complete(t, "", cancelled));
        workflows.cancelWaiting(in, cancelled);
        cancelRunning(in, t -> true, cancelled);
        return (int) (in.cancelled - before);
    }

    /**
     * CANCEL_TASKS: ends the unfinished tasks of {@code in} whose client ids are {@code clientTaskIds}
     * (queued, waiting or running); the tasks that need one end as a cancelled producer's dependants
     * do. Returns how many of those named were unfinished; the others (finished, unknown) are passed over.
     */
    int cancelTasks(Instance in, long[] clientTaskIds, String reason) {
        Set<Long> named = new HashSet<>(clientTaskIds.length * 2);
        for (long id : clientTaskIds) {
            named.add(id);
        }
        // the dispatcher's own run of a producer (a lost temporary made again) is not the client's task
        Predicate<Task> which = t -> !t.isRerun() && named.contains(t.clientTaskId);
        Execution cancelled = Execution.of(TaskStatus.CANCELLED, reason, core.nowMicros);
        int[] n = {0};
        core.ledger.dequeueIf(in, which, t -> {
            n[0]++;
            complete(t, "", cancelled);
        });
        n[0] += workflows.cancelWaitingIf(in, which.and(t -> !t.finished), cancelled);
        n[0] += cancelRunning(in, which, cancelled);
        return n[0];
    }

    /** Ends the running tasks of {@code in} that {@code which} accepts, and has their executors kill them. */
    private int cancelRunning(Instance in, Predicate<Task> which, Execution cancelled) {
        int n = 0;
        if (in.running == 0) {
            return 0;
        }
        for (ExecutorState e : core.pool.all()) {
            List<Task> mine = null;
            for (Task t : e.runningTasks()) {
                if (t.instance == in && which.test(t)) {
                    (mine == null ? mine = new ArrayList<>() : mine).add(t);
                }
            }
            if (mine == null) {
                continue;
            }
            long[] taskIds = new long[mine.size()];
            for (int i = 0; i < taskIds.length; i++) {
                Task t = mine.get(i);
                taskIds[i] = t.id;
                core.ledger.unassign(t);
                complete(t, e.id, cancelled);
            }
            n += taskIds.length;
            // the executor kills them and returns their credits with RESULTs we will ignore
            core.outbox.send(e.link, new Message.Cancel(taskIds));
        }
        return n;
    }

    /** Ends what the instance has not started, running tasks excepted (HALT): returns how many. */
    int cancelQueued(Instance in, Execution cancelled) {
        long before = in.cancelled;
        core.ledger.dequeueAll(in, t -> complete(t, "", cancelled));
        workflows.cancelWaiting(in, cancelled);
        return (int) (in.cancelled - before);
    }

    /**
     * Ends a queued task that no registered executor could ever run (more cores, memory or disk than
     * the largest has), naming what it needs; true if it did. With no executor registered it waits: a
     * provisioner may be starting some.
     */
    boolean refuseIfTooLarge(Task t) {
        if (core.pool.size() == 0 || core.pool.someoneCouldHold(t)) {
            return false;
        }
        core.ledger.drop(t);
        complete(t, "", Execution.of(TaskStatus.REJECTED, Execution.PERMANENT, "not run: it needs " + t.cores
                + (t.cores == 1 ? " core" : " cores") + (t.memoryMiB > 0 ? ", " + t.memoryMiB + " MiB of memory" : "")
                + (t.diskMiB > 0 ? ", " + t.diskMiB + " MiB of disk" : "") + (t.named != null ? ", " + t.named : "")
                + " of one executor, and the registered "
                + "executors have at most " + core.pool.largest(), core.nowMicros));
        return true;
    }

    /** The instance is gone for good: what it held is let go, it is forgotten and its journal record closed. */
    void forget(Instance in) {
        workflows.forget(in);
        core.instances.forget(in);
        if (in.retainsResults()) {
            core.journal.destroyed(in.id);
        }
    }
}
