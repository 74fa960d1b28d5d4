package io.falkon.dispatcher.journal;

import io.falkon.dispatcher.core.InstanceRecord;
import io.falkon.dispatcher.core.Recovery;
import io.falkon.protocol.Message;
import io.netty.buffer.ByteBuf;

import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The live state rebuilt from a journal's records, applied in order. Every record is idempotent
 * (a compaction can leave a record both in the snapshot and after it), and the result is what
 * the dispatcher held: instances, accepted tasks without a final result, and final results not
 * yet acknowledged.
 */
final class Replay {
    static final class InstanceState {
        final long id;
        InstanceRecord record;
        long ackedUpTo;
        /** Ranges of accepted ids carried by the instance record (acknowledged tasks leave no other trace). */
        long[] acceptedRanges = new long[0];
        final Map<Long, Accepted> pending = new LinkedHashMap<>();
        final TreeMap<Long, Message.DeliveredResult> unacked = new TreeMap<>();
        final Set<Long> finished = new HashSet<>();
        /** Keys of finished producers (dataflow), in the order they finished. */
        final java.util.List<Produced> produced = new java.util.ArrayList<>();

        InstanceState(long id) {
            this.id = id;
        }

        /** The instance record with every id seen since it was written. */
        InstanceRecord current() {
            InstanceRecord r = record;
            return new InstanceRecord(id, r.name(), r.secret(), r.leaseSeconds(), r.createdMicros(), -1, ranges(this));
        }
    }

    record Accepted(long submittedMicros, byte[] spec) {
    }

    record Produced(String[] objectIds, String name, boolean ok, long failedProducer) {
    }

    void produced(long instanceId, String[] objectIds, String name, boolean ok, long failedProducer) {
        InstanceState s = get(instanceId);
        if (s != null) {
            s.produced.add(new Produced(objectIds, name, ok, failedProducer));
        }
    }

    /** Folds the ids of every task seen so far into the instance record's ranges. */
    private static long[] ranges(InstanceState s) {
        TreeSet<Long> ids = new TreeSet<>(s.finished);
        ids.addAll(s.pending.keySet());
        long[] out = Arrays.copyOf(s.acceptedRanges, s.acceptedRanges.length + 2 * ids.size());
        int i = s.acceptedRanges.length;
        for (long id : ids) {
            out[i++] = id;
            out[i++] = id;
        }
        return out;
    }

    final Map<Long, InstanceState> instances = new LinkedHashMap<>();
    long records;

    private InstanceState get(long id) {
        return instances.get(id);
    }

    void instance(InstanceRecord r) {
        InstanceState s = instances.computeIfAbsent(r.id(), InstanceState::new);
        s.record = r;
        s.acceptedRanges = r.acceptedRanges();
    }

    void accepted(long instanceId, long clientTaskId, long submittedMicros, byte[] spec) {
        InstanceState s = get(instanceId);
        if (s == null) {
            return;
        }
        if (!s.finished.contains(clientTaskId)) {
            s.pending.putIfAbsent(clientTaskId, new Accepted(submittedMicros, spec));
        }
    }

    void completed(long instanceId, Message.DeliveredResult r) {
        InstanceState s = get(instanceId);
        if (s == null) {
            return;
        }
        s.pending.remove(r.clientTaskId());
        s.finished.add(r.clientTaskId());
        if (r.seq() > s.ackedUpTo) {
            s.unacked.put(r.seq(), r);
        }
    }

    void acked(long instanceId, long upToSeq) {
        InstanceState s = get(instanceId);
        if (s == null) {
            return;
        }
        s.ackedUpTo = Math.max(s.ackedUpTo, upToSeq);
        s.unacked.headMap(upToSeq, true).clear();
    }

    void destroyed(long instanceId) {
        instances.remove(instanceId);
    }

    int pendingTasks() {
        return instances.values().stream().mapToInt(s -> s.pending.size()).sum();
    }

    int unackedResults() {
        return instances.values().stream().mapToInt(s -> s.unacked.size()).sum();
    }

    /** Hands the state to a scheduler that has not started yet. */
    void restoreInto(Recovery into) {
        for (InstanceState s : instances.values()) {
            into.instance(s.current());
            into.nextSeq(s.id, s.ackedUpTo + 1);
            for (Message.DeliveredResult r : s.unacked.values()) {
                into.result(s.id, r);
            }
            for (Produced p : s.produced) {
                into.produced(s.id, p.objectIds(), p.name(), p.ok(), p.failedProducer());
            }
            // in submission order (clients number tasks as they send them): producers before their consumers
            new TreeMap<>(s.pending).forEach((clientTaskId, a) -> into.task(s.id, clientTaskId,
                    a.submittedMicros, a.spec));
        }
    }

    /** Writes this state as records: the contents of a compacted journal. */
    void writeTo(ByteBuf out) {
        for (InstanceState s : instances.values()) {
            Records.instance(out, s.current());
            if (s.ackedUpTo > 0) {
                Records.acked(out, s.id, s.ackedUpTo);
            }
            for (Message.DeliveredResult r : s.unacked.values()) {
                Records.completed(out, s.id, r);
            }
            for (Produced p : s.produced) {
                Records.produced(out, s.id, p.objectIds(), p.name(), p.ok(), p.failedProducer());
            }
            s.pending.forEach((clientTaskId, a) -> Records.accepted(out, s.id, clientTaskId, a.submittedMicros, a.spec));
        }
    }
}
