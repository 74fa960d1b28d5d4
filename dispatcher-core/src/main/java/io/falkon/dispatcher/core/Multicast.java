package io.falkon.dispatcher.core;

import io.falkon.protocol.LogSafe;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskInput;
import io.falkon.protocol.TaskSpecCodec;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Multicast (seed 004 §V-F, Fig. 9): an object that many queued tasks read is copied to every
 * executor ahead of demand, along a tree, instead of each executor pulling it from the shared store
 * or all of them from one peer. One executor fetches it from the store; from then on every executor
 * that holds it passes it to up to {@link #FAN_OUT} others at a time ({@code REPLICATE}: "fetch it
 * from this peer"), each copy verified where it arrives, and each arrival ({@code CACHE_UPDATE})
 * makes a new sender. With fan-out f the copies reach N executors in about log_(f+1)(N) rounds of
 * one transfer each: the store is read once.
 *
 * <p>Demand is counted per input object over the queued tasks of a data-aware policy; an object is
 * multicast once its queued readers number at least the executors with a cache (three or more),
 * i.e. when most of them will read it. State is the scheduler thread's; no I/O but the outbox.
 */
final class Multicast {
    private static final Logger log = LoggerFactory.getLogger(Multicast.class);
    /** Transfers one holder serves at once. */
    static final int FAN_OUT = 2;
    /** Fewer executors with a cache than this: nothing to gain from a tree. */
    static final int MIN_EXECUTORS = 3;
    /** A copy not reported by then is given up (its executor is not asked again for this object). */
    static final long TRANSFER_TIMEOUT_MICROS = 300_000_000L;

    /** One transfer under way: from a holder (null: the store) to the executor it is keyed by. */
    private record Transfer(ExecutorState from, long startedMicros) {
    }

    /** An object's demand and, while it is being multicast, the tree's state. */
    private static final class Demand {
        final String id;
        int queued;
        /** How to fetch it (from the first reader's spec), while it is multicast. */
        Message.Replica template;
        boolean done;
        final Map<ExecutorState, Transfer> inflight = new LinkedHashMap<>();
        final Map<ExecutorState, Integer> sending = new HashMap<>();
        final Set<ExecutorState> failed = new HashSet<>();

        Demand(String id) {
            this.id = id;
        }
    }

    private final CacheIndex index;
    private final Outbox outbox;
    private final Map<String, Demand> demand = new HashMap<>();
    private final List<Demand> active = new ArrayList<>();
    /** The registered executors with a cache server: kept here so that the threshold costs nothing per task. */
    private final Set<ExecutorState> caches = new java.util.LinkedHashSet<>();
    private boolean changed;
    private long transfers;
    private long storeTransfers;

    Multicast(ExecutorPool pool, Outbox outbox) {
        this.index = pool.index();
        this.outbox = outbox;
    }

    /** REPLICATE orders sent so far, and how many of them read the store. */
    long transfers() {
        return transfers;
    }

    long storeTransfers() {
        return storeTransfers;
    }

    /** Objects being multicast now. */
    int active() {
        return active.size();
    }

    /** A task with inputs entered ({@code sign} 1) or left (-1) the queue. */
    void queued(Task t, int sign) {
        for (String id : t.inputIds) {
            Demand d = demand.get(id);
            if (d == null) {
                if (sign < 0) {
                    continue; // counted before this object was known: nothing to undo
                }
                d = new Demand(id);
                demand.put(id, d);
            }
            d.queued += sign;
            if (d.queued <= 0 && d.template == null) {
                demand.remove(id);
            } else if (sign > 0 && d.template == null && !d.done && d.queued >= threshold()) {
                start(d, t);
            }
        }
    }

    private int threshold() {
        return caches.size() < MIN_EXECUTORS ? Integer.MAX_VALUE : caches.size();
    }

    /** {@code e} registered: one more executor the tree can reach, if it has a cache. */
    void executorJoined(ExecutorState e) {
        if (e.cachePeer != null) {
            caches.add(e);
        }
    }

    private void start(Demand d, Task reader) {
        for (TaskInput in : TaskSpecCodec.decode(reader.spec).inputs()) {
            if (in.id().equals(d.id) && in.unpack() == TaskInput.AS_STORED) {
                d.template = new Message.Replica(in.id(), in.source(), in.size(), in.checksum(), List.of());
                active.add(d);
                changed = true;
                log.info("multicasting {} to the executors: {} queued tasks read it", LogSafe.text(d.id), d.queued);
                return;
            }
        }
        d.done = true; // read unpacked: the executors cache another form than the one peers serve
    }

    /** {@code e} reported a copy of {@code id} (it may pass it on now). */
    void arrived(ExecutorState e, String id) {
        Demand d = demand.get(id);
        if (d == null || d.template == null) {
            return;
        }
        Transfer t = d.inflight.remove(e);
        if (t != null && t.from() != null) {
            d.sending.merge(t.from(), -1, Integer::sum);
        }
        changed = true;
    }

    /** {@code e} left: transfers to it are over, and those it served go to other holders. */
    void executorGone(ExecutorState e) {
        caches.remove(e);
        for (Demand d : active) {
            arrived(e, d.id);
            d.sending.remove(e);
            for (Iterator<Map.Entry<ExecutorState, Transfer>> it = d.inflight.entrySet().iterator(); it.hasNext(); ) {
                if (it.next().getValue().from() == e) {
                    it.remove(); // its target fetches on from the store if it must; asked again from elsewhere
                }
            }
        }
        changed = true;
    }

    /** Sends the transfers the tree allows now; ends each multicast that has reached every executor. */
    void step(long nowMicros) {
        if (active.isEmpty() || (!changed && !anyTimedOut(nowMicros))) {
            return;
        }
        changed = false;
        for (Iterator<Demand> it = active.iterator(); it.hasNext(); ) {
            Demand d = it.next();
            giveUpLate(d, nowMicros);
            List<ExecutorState> targets = targets(d);
            List<ExecutorState> holders = new ArrayList<>();
            for (ExecutorState h : index.holders(d.id)) {
                if (h.alive && h.cachePeer != null) {
                    holders.add(h);
                }
            }
            if (holders.isEmpty() && d.inflight.isEmpty() && !targets.isEmpty()) {
                send(d, targets.remove(0), null, nowMicros); // the one read of the store
                storeTransfers++;
            }
            for (ExecutorState h : holders) {
                while (!targets.isEmpty() && d.sending.getOrDefault(h, 0) < FAN_OUT) {
                    send(d, targets.remove(0), h, nowMicros);
                    d.sending.merge(h, 1, Integer::sum);
                }
            }
            if (targets.isEmpty() && d.inflight.isEmpty()) {
                d.done = true;
                d.template = null;
                if (d.queued <= 0) {
                    demand.remove(d.id);
                }
                it.remove();
                log.info("multicast of {} done: {} executors hold it", LogSafe.text(d.id), holders.size());
            }
        }
    }

    /** Executors with a cache that lack the object and are neither receiving it nor given up on. */
    private List<ExecutorState> targets(Demand d) {
        Set<ExecutorState> holding = new HashSet<>(index.holders(d.id));
        List<ExecutorState> out = new ArrayList<>();
        for (ExecutorState e : caches) {
            if (e.alive && !holding.contains(e) && !d.inflight.containsKey(e)
                    && !d.failed.contains(e)) {
                out.add(e);
            }
        }
        return out;
    }

    private void send(Demand d, ExecutorState target, ExecutorState from, long nowMicros) {
        Message.Replica r = d.template;
        outbox.send(target.link, new Message.Replicate(List.of(new Message.Replica(r.id(), r.source(), r.size(),
                r.checksum(), from == null ? List.of() : List.of(from.cachePeer)))));
        d.inflight.put(target, new Transfer(from, nowMicros));
        transfers++;
    }

    private boolean anyTimedOut(long nowMicros) {
        for (Demand d : active) {
            for (Transfer t : d.inflight.values()) {
                if (nowMicros - t.startedMicros() > TRANSFER_TIMEOUT_MICROS) {
                    return true;
                }
            }
        }
        return false;
    }

    private void giveUpLate(Demand d, long nowMicros) {
        for (Iterator<Map.Entry<ExecutorState, Transfer>> it = d.inflight.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<ExecutorState, Transfer> x = it.next();
            if (nowMicros - x.getValue().startedMicros() > TRANSFER_TIMEOUT_MICROS) {
                it.remove();
                d.failed.add(x.getKey());
                if (x.getValue().from() != null) {
                    d.sending.merge(x.getValue().from(), -1, Integer::sum);
                }
                log.warn("multicast of {}: executor {} reported no copy in time; not asked again", LogSafe.text(d.id),
                        LogSafe.text(x.getKey().id));
            }
        }
    }
}
