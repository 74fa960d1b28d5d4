package io.falkon.dispatcher.core;

import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpecCodec;
import io.falkon.protocol.time.Clock;

import java.util.function.BiConsumer;

/**
 * The scheduler's state as the journal sees it: rebuilt from a replayed journal before the loop
 * starts ({@code instance}, {@code produced}, {@code result}, {@code nextSeq}, {@code task}, in that
 * order), and written out whole for a compacted one ({@link #writeTo}). Kept apart from the
 * scheduler's event handling, which never calls it; on the scheduler thread (or before it starts).
 */
public final class Recovery {
    private final InstanceRegistry instances;
    private final TaskLedger ledger;
    private final ExecutorPool pool;
    private final Clock clock;
    /** A restored task whose dependency had already failed: finished at once, as on submission. */
    private final BiConsumer<Task, Dataflow.Key> dependencyFailed;

    Recovery(InstanceRegistry instances, TaskLedger ledger, ExecutorPool pool, Clock clock,
             BiConsumer<Task, Dataflow.Key> dependencyFailed) {
        this.instances = instances;
        this.ledger = ledger;
        this.pool = pool;
        this.clock = clock;
        this.dependencyFailed = dependencyFailed;
    }

    /** Re-creates an instance from the journal; it starts detached, with a fresh lease. */
    public void instance(InstanceRecord record) {
        instances.restore(record, clock.tickMicros());
    }

    /** Re-queues an accepted task that had no final result (at-least-once: it may have run before). */
    public void task(long instanceId, long clientTaskId, long submittedMicros, byte[] spec) {
        Instance in = instances.get(instanceId);
        if (in == null) {
            return;
        }
        in.accept(clientTaskId);
        Dataflow.Key[] failed = new Dataflow.Key[1];
        Task t = ledger.accept(in, clientTaskId, spec, submittedMicros, TaskSpecCodec.scan(spec), failed);
        if (failed[0] != null) {
            dependencyFailed.accept(t, failed[0]);
        }
    }

    /**
     * What a finished producer left (journaled with its result): its keys produced, or failed.
     * Restored before the tasks, so that a task waiting for them finds them.
     */
    public void produced(long instanceId, String[] objectIds, String name, boolean ok, long failedProducer) {
        Instance in = instances.get(instanceId);
        if (in == null) {
            return;
        }
        Dataflow dataflow = in.producing();
        Dataflow.State state = ok ? Dataflow.State.PRODUCED : Dataflow.State.FAILED;
        if (objectIds != null) {
            for (String id : objectIds) {
                dataflow.restore(id, false, state, failedProducer);
            }
        }
        if (name != null) {
            dataflow.restore(name, true, state, failedProducer);
        }
    }

    /** Keeps a final result the client had not acknowledged, for redelivery when it re-attaches. */
    public void result(long instanceId, Message.DeliveredResult r) {
        Instance in = instances.get(instanceId);
        if (in == null) {
            return;
        }
        instances.retain(in, r);
        in.accept(r.clientTaskId());
        in.seqUsed(r.seq());
        ledger.finished(in, r.execution());
    }

    /** Restores the result sequence counter of an instance whose results were all acknowledged. */
    public void nextSeq(long instanceId, long nextSeq) {
        Instance in = instances.get(instanceId);
        if (in != null) {
            in.seqUsed(nextSeq - 1);
        }
    }

    /** Writes the live state through {@code out}: what a compacted journal must hold. */
    public void writeTo(Journal out) {
        for (Instance in : instances.all()) {
            if (!in.retainsResults()) {
                continue;
            }
            out.instanceCreated(in.record());
            if (in.lastSeq() > 0 && in.unackedCount() == 0) {
                out.acked(in.id, in.lastSeq()); // keeps the sequence counter
            }
            instances.forEachRetained(in, r -> out.completed(in.id, r));
            if (in.dataflow != null) {
                in.dataflow.forEachFinished((key, isName, state, failedProducer) -> out.produced(in.id,
                        isName ? null : new String[]{key}, isName ? key : null, state == Dataflow.State.PRODUCED,
                        failedProducer));
                in.dataflow.forEachWaiting(t -> out.accepted(in.id, t.clientTaskId, t.submittedMicros, t.spec));
            }
        }
        ledger.forEachQueued(t -> t.instance.retainsResults(),
                t -> out.accepted(t.instance.id, t.clientTaskId, t.submittedMicros, t.spec));
        for (ExecutorState e : pool.all()) {
            for (Task t : e.runningTasks()) {
                if (t.instance.retainsResults()) {
                    out.accepted(t.instance.id, t.clientTaskId, t.submittedMicros, t.spec);
                }
            }
        }
    }
}
