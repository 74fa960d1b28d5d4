package io.falkon.dispatcher.core;

import io.falkon.protocol.Message;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * A client's instance (factory/instance pattern): its counters, its results on their way to the
 * client, and, when it has a lease, the delivered results the client has not acknowledged yet.
 */
final class Instance {
    final long id;
    final String name;
    final long leaseMicros;
    /** Wall-clock time of its creation (journaled). */
    final long createdMicros;
    /** The connection it belongs to; null while detached (its client went away, the lease runs). */
    Link owner;
    /** Whether its lease is running: detached since {@link #detachedMicros} (monotonic tick). */
    boolean detached;
    long detachedMicros;
    int queued;
    int running;
    long completed;
    long succeeded;
    long cancelled;
    long nextSeq = 1;
    long highestClientTaskId = -1;
    /** Results gathered during the current batch, sent as one DELIVER at its end. */
    List<Message.DeliveredResult> outbox;
    boolean inOutboxList;
    /** Delivered but not acknowledged (only with a lease), in sequence order. */
    final ArrayDeque<Message.DeliveredResult> unacked = new ArrayDeque<>();
    long unackedBytes;
    boolean gone;

    Instance(long id, String name, Link owner, long leaseSeconds, long createdMicros) {
        this.id = id;
        this.name = name;
        this.owner = owner;
        this.leaseMicros = leaseSeconds * 1_000_000L;
        this.createdMicros = createdMicros;
    }

    boolean retainsResults() {
        return leaseMicros > 0;
    }

    long failed() {
        return completed - succeeded;
    }

    void addToOutbox(Message.DeliveredResult r, List<Instance> delivering) {
        if (outbox == null) {
            outbox = new ArrayList<>();
        }
        outbox.add(r);
        if (!inOutboxList) {
            inOutboxList = true;
            delivering.add(this);
        }
    }

    static long footprint(Message.DeliveredResult r) {
        return 160 + r.execution().stdout().length + r.execution().stderr().length + 2L * r.execution().detail().length();
    }
}
