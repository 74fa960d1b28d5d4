package io.falkon.dispatcher.journal;

import io.falkon.dispatcher.core.Scheduler;
import io.falkon.protocol.Message;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The live state rebuilt from a journal's records, applied in order. Every record is idempotent
 * (a compaction can leave a record both in the snapshot and after it), and the result is what
 * the dispatcher held: instances, accepted tasks without a final result, and final results not
 * yet acknowledged.
 */
final class Replay {
    static final class InstanceState {
        final long id;
        String name;
        long leaseSeconds;
        long createdMicros;
        long ackedUpTo;
        long highestClientTaskId = -1;
        final Map<Long, Accepted> pending = new LinkedHashMap<>();
        final TreeMap<Long, Message.DeliveredResult> unacked = new TreeMap<>();
        final java.util.Set<Long> finished = new java.util.HashSet<>();

        InstanceState(long id) {
            this.id = id;
        }
    }

    record Accepted(long submittedMicros, byte[] spec) {
    }

    final Map<Long, InstanceState> instances = new LinkedHashMap<>();
    long records;

    private InstanceState get(long id) {
        return instances.get(id);
    }

    void instance(long id, long leaseSeconds, long createdMicros, long highestClientTaskId, String name) {
        InstanceState s = instances.computeIfAbsent(id, InstanceState::new);
        s.name = name;
        s.leaseSeconds = leaseSeconds;
        s.createdMicros = createdMicros;
        s.highestClientTaskId = Math.max(s.highestClientTaskId, highestClientTaskId);
    }

    void accepted(long instanceId, long clientTaskId, long submittedMicros, byte[] spec) {
        InstanceState s = get(instanceId);
        if (s == null) {
            return;
        }
        s.highestClientTaskId = Math.max(s.highestClientTaskId, clientTaskId);
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
        s.highestClientTaskId = Math.max(s.highestClientTaskId, r.clientTaskId());
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
    void restoreInto(Scheduler scheduler) {
        for (InstanceState s : instances.values()) {
            scheduler.restoreInstance(s.id, s.name == null ? "" : s.name, s.leaseSeconds, s.createdMicros);
            scheduler.restoreNextSeq(s.id, s.ackedUpTo + 1);
            for (Message.DeliveredResult r : s.unacked.values()) {
                scheduler.restoreResult(s.id, r);
            }
            s.pending.forEach((clientTaskId, a) -> scheduler.restoreTask(s.id, clientTaskId, a.submittedMicros, a.spec));
            scheduler.restoreHighestClientTaskId(s.id, s.highestClientTaskId);
        }
    }

    /** Writes this state as records: the contents of a compacted journal. */
    void writeTo(io.netty.buffer.ByteBuf out) {
        for (InstanceState s : instances.values()) {
            Records.instance(out, s.id, s.name == null ? "" : s.name, s.leaseSeconds, s.createdMicros,
                    s.highestClientTaskId);
            if (s.ackedUpTo > 0) {
                Records.acked(out, s.id, s.ackedUpTo);
            }
            for (Message.DeliveredResult r : s.unacked.values()) {
                Records.completed(out, s.id, r);
            }
            s.pending.forEach((clientTaskId, a) -> Records.accepted(out, s.id, clientTaskId, a.submittedMicros, a.spec));
        }
    }
}
