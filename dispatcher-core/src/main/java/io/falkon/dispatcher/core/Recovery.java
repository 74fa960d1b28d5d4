package io.falkon.dispatcher.core;

import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpecCodec;
import io.falkon.protocol.time.Clock;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * The scheduler's state as the journal sees it: rebuilt from a replayed journal before the loop
 * starts ({@code instance}, {@code produced}, {@code result}, {@code nextSeq}, {@code task}, in that
 * order), and written out whole for a compacted one ({@link #writeTo}). Kept apart from the
 * scheduler's event handling; on the scheduler thread (or before it starts).
 *
 * <p><b>Replayed tasks wait for their client.</b> An instance's tasks that had no result are held
 * here, not queued, until its client re-attaches or {@link #HOLD_MICROS} pass after the restart,
 * whichever is first. A client of several dispatchers may have sent them elsewhere while this one
 * was away (failover, docs/scaling.md); it re-attaches with {@code ATTACH_MOVED} naming them, and
 * they are cancelled in the same step as the release (ClientRequests' attach), before any executor (which
 * may well register before the client is back) could start them again. A detached instance's tasks,
 * with no client to come back, run after the hold.
 */
public final class Recovery {
    /** How long replayed tasks wait for their client after a restart: three missed heartbeats. */
    public static final long HOLD_MICROS = 15_000_000;
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

    /** A replayed task waiting for its instance's client (see the class comment). */
    private record Replayed(long clientTaskId, long submittedMicros, byte[] spec) {
    }

    /** An instance's replayed tasks, in submission order, and until when they wait. */
    private static final class Held {
        final long untilMicros;
        final List<Replayed> tasks = new ArrayList<>();

        Held(long untilMicros) {
            this.untilMicros = untilMicros;
        }
    }

    /** By instance id, in the order instances were restored. */
    private final Map<Long, Held> held = new LinkedHashMap<>();

    /**
     * An accepted task that had no final result: held for its client, then queued again
     * (at-least-once: it may have run before).
     */
    public void task(long instanceId, long clientTaskId, long submittedMicros, byte[] spec) {
        Instance in = instances.get(instanceId);
        if (in == null) {
            return;
        }
        in.accept(clientTaskId); // a bundle sent again after the restart is recognised at once
        held.computeIfAbsent(instanceId, x -> new Held(clock.tickMicros() + HOLD_MICROS)).tasks
                .add(new Replayed(clientTaskId, submittedMicros, spec));
    }

    /** How many replayed tasks wait for their clients. */
    public int heldCount() {
        int n = 0;
        for (Held h : held.values()) {
            n += h.tasks.size();
        }
        return n;
    }

    /** The instance's client is back: its replayed tasks are queued, in submission order. */
    void release(Instance in) {
        Held h = held.remove(in.id);
        if (h != null) {
            h.tasks.forEach(r -> requeue(in, r));
        }
    }

    /** The timer: replayed tasks whose client did not come back within the hold are queued; whether any were. */
    boolean releaseDue(long tickMicros) {
        boolean any = false;
        for (Iterator<Map.Entry<Long, Held>> it = held.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<Long, Held> e = it.next();
            if (e.getValue().untilMicros > tickMicros) {
                continue;
            }
            it.remove();
            Instance in = instances.get(e.getKey()); // null: destroyed meanwhile (its lease ran out)
            if (in != null) {
                for (Replayed r : e.getValue().tasks) {
                    requeue(in, r);
                }
                any = true;
            }
        }
        return any;
    }

    private void requeue(Instance in, Replayed r) {
        long clientTaskId = r.clientTaskId();
        long submittedMicros = r.submittedMicros();
        byte[] spec = r.spec();
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
            Held h = held.get(in.id);
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
            if (h != null) {
                h.tasks.forEach(r -> out.accepted(in.id, r.clientTaskId(), r.submittedMicros(), r.spec()));
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
