package io.falkon.dispatcher.core;

import io.falkon.protocol.DataCodec;
import io.falkon.protocol.Execution;
import io.falkon.protocol.LogSafe;
import io.falkon.protocol.Message;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * Temporary (intermediate) objects, as AMFS keeps them (seed 004 §V): an output marked temporary
 * stays only in its producer's cache, held there (pinned) while an accepted task still reads it,
 * and is never written to the shared store. This part of the core knows who holds each one, tells
 * the holder when the last reader has finished ({@code RELEASE}), and when a holder is lost before
 * every reader has the object, runs the producer again (its spec is known) so that the readers
 * wait for the new copy; where that cannot be done (the producer is unknown after a restart, or
 * was run again {@link #MAX_RERUNS} times) the readers fail as a missing input does.
 * State is the scheduler thread's; no I/O but the outbox.
 */
final class Intermediates {
    private static final Logger log = LoggerFactory.getLogger(Intermediates.class);
    /** Times one object is made again before its readers are left to fail. */
    static final int MAX_RERUNS = 3;

    /** How the scheduler ends a task (its result delivered or, for a rerun, only its keys settled). */
    interface Completion {
        void complete(Task t, Execution x);

        /** The result of a task that can never run because {@code key} failed. */
        Execution dependencyFailed(Dataflow.Key key);
    }

    private final TaskLedger ledger;
    private final CacheIndex index;
    private final Outbox outbox;
    private final Completion completion;
    private long reruns;

    Intermediates(TaskLedger ledger, CacheIndex index, Outbox outbox, Completion completion) {
        this.ledger = ledger;
        this.index = index;
        this.outbox = outbox;
        this.completion = completion;
    }

    /** Producers run again because what they made was lost. */
    long reruns() {
        return reruns;
    }

    /**
     * A producer with temporary outputs succeeded on {@code e}: the objects its result says are
     * held there get {@code e} as holder (and an index entry now, so that the readers it releases
     * are sent to it). A copy no key is waiting for (made again where one still existed) is let go.
     */
    void produced(Task t, ExecutorState e, Execution x) {
        Dataflow df = t.instance.dataflow;
        for (String id : DataCodec.heldOf(x)) {
            Dataflow.Key k = df == null ? null : df.object(id);
            if (k == null || !k.temporary || k.producer != t) {
                outbox.send(e.link, new Message.Release(List.of(id)));
                continue;
            }
            k.holder = e;
            e.held.add(k);
            index.add(e, id, 0);
            if (k.lost && k.readers == 0) {
                release(k); // made again for readers that have finished meanwhile
            }
        }
    }

    /** The last reader of {@code k} finished: its holder may evict it now. */
    void unneeded(Dataflow.Key k) {
        if (k.state == Dataflow.State.PRODUCED && k.holder != null) {
            release(k);
        }
    }

    private void release(Dataflow.Key k) {
        ExecutorState h = k.holder;
        k.holder = null;
        h.held.remove(k);
        if (h.alive) {
            outbox.send(h.link, new Message.Release(List.of(k.id)));
        }
    }

    /** The instance is gone: everything held for it is let go. */
    void forget(Instance in) {
        if (in.dataflow != null) {
            in.dataflow.forEachHeld(this::release);
        }
    }

    /**
     * {@code e} left (its index entries are gone already): each object it held that still has
     * readers and no other copy in the index is made again now, before its readers ask for it.
     */
    void holderLost(ExecutorState e, long nowMicros) {
        if (e.held.isEmpty()) {
            return;
        }
        Dataflow.Key[] lost = e.held.toArray(Dataflow.Key[]::new);
        e.held.clear();
        for (Dataflow.Key k : lost) {
            k.holder = null;
        }
        for (Dataflow.Key k : lost) {
            if (k.readers > 0 && k.state == Dataflow.State.PRODUCED && index.holders(k.id).isEmpty()) {
                remake(k, nowMicros);
            }
        }
    }

    /**
     * A task that reads temporary objects could not run (its fetch failed, or its executor was
     * lost): each object it reads that nobody holds any more is made again, and the task waits for
     * those being made. Returns true when the task was handled here (waiting again, or ended because
     * an object cannot be made), false when nothing it reads is missing: the usual retry rules apply.
     */
    boolean awaitMissing(Task t, ExecutorState on, long nowMicros) {
        Dataflow df = t.instance.dataflow;
        df.temporaryInputs(t, k -> {
            if (k.state == Dataflow.State.PRODUCED && unheld(k)) {
                remake(k, nowMicros);
            }
        });
        Dataflow.Key[] failed = new Dataflow.Key[1];
        int missing = df.subscribe(t, failed);
        if (missing == 0) {
            return false;
        }
        if (missing < 0) {
            completion.complete(t, completion.dependencyFailed(failed[0]));
        } else {
            t.failedOn(on);
            ledger.waitAgain(t, missing);
        }
        return true;
    }

    private static boolean unheld(Dataflow.Key k) {
        return k.holder == null || !k.holder.alive;
    }

    /**
     * Runs the producer of {@code k} again, making it (and every other temporary output of that
     * producer that nobody holds) pending with the rerun as producer. Does nothing when the producer
     * is unknown (restored from a journal) or has been run again {@link #MAX_RERUNS} times for it.
     */
    private void remake(Dataflow.Key k, long nowMicros) {
        Task origin = k.origin;
        if (origin == null || origin.instance.gone || k.reruns >= MAX_RERUNS) {
            log.warn("temporary object {} was lost and cannot be made again ({})", LogSafe.text(k.id),
                    origin == null ? "its producer is not known since the dispatcher restarted"
                            : "made " + k.reruns + " times already");
            return;
        }
        Dataflow df = origin.instance.dataflow;
        Task r = ledger.rerun(origin, nowMicros);
        DataflowNode f = origin.flow;
        for (int i = 0; i < f.outputIds.length; i++) {
            Dataflow.Key o = df.object(f.outputIds[i]);
            if (f.temporary[i] && o != null && o.origin == origin && o.state == Dataflow.State.PRODUCED
                    && unheld(o)) {
                o.state = Dataflow.State.PENDING;
                o.producer = r;
                o.reruns++;
                o.lost = true;
            }
        }
        reruns++;
        log.info("temporary object {} was lost: running task {} again to make it", LogSafe.text(k.id),
                Long.toUnsignedString(origin.clientTaskId));
        Dataflow.Key[] failed = new Dataflow.Key[1];
        ledger.place(r, df, failed);
        if (failed[0] != null) {
            completion.complete(r, completion.dependencyFailed(failed[0]));
        }
    }
}
