package io.falkon.dispatcher.core;

import io.falkon.protocol.Message;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Collections;

/**
 * A client's instance (factory/instance pattern): its counters, its results on their way to the
 * client, and, when it has a lease, the delivered results the client has not acknowledged yet.
 * Its mutable fields belong to one part each, which alone writes them (CoreOwnershipTest holds the
 * table): its connection, lease and retained results to the {@link InstanceRegistry}, its task
 * counts and dataflow to the {@link TaskLedger}; the rest to itself, behind the methods below.
 */
final class Instance {
    final long id;
    /** What a client must present, besides the id, to take the instance over (ATTACH). */
    final String secret;
    final String name;
    final long leaseMicros;
    /** Wall-clock time of its creation (journaled). */
    final long createdMicros;
    /** The connection it belongs to; null while detached (its client went away, the lease runs). */
    Link owner;
    /** Whether its lease is running: detached since {@link #detachedMicros} (monotonic tick). */
    boolean detached;
    long detachedMicros;
    /** Monotonic tick of the owner's last request (for owners whose lease runs while attached). */
    long lastRequestMicros;
    int queued;
    int running;
    /** Tasks waiting for what other tasks of the instance produce. */
    int waiting;
    /** Its queued tasks in its own order and its last turn ({@link TaskQueue}'s; null until it queues one). */
    TaskQueue.Own queueOwn;
    /**
     * Its share of the executors against other instances' (1 unless the dispatcher's operator set
     * another for its name: {@code falkon dispatcher --share-file}), as the queue's stride: {@link
     * TaskQueue#STRIDE_UNIT} / share.
     */
    private long stride = TaskQueue.STRIDE_UNIT;
    /** Its dependencies by data and by name; null until a task of it produces something (most instances). */
    Dataflow dataflow;
    long completed;
    long succeeded;
    long cancelled;
    /** The sequence number its next retained result gets (from 1). */
    private long nextSeq = 1;
    /** Client task ids accepted so far: a re-sent bundle is recognised, a reused id refused. */
    private final IdSet accepted = new IdSet();
    /** Delivered but not acknowledged (only with a lease), in sequence order. */
    final ArrayDeque<Message.DeliveredResult> unacked = new ArrayDeque<>();
    long unackedBytes;
    /**
     * Whether later results go to the {@link ResultSpill} (once the heap's share is used up): it then
     * holds seqs {@code spilledFromSeq..spilledThroughSeq}, those up to {@code ackedSeq} acknowledged.
     */
    boolean spilling;
    long spilledFromSeq;
    long spilledThroughSeq;
    long ackedSeq;
    boolean gone;
    /** HALT: nothing more starts; new tasks are refused. */
    private boolean halted;

    Instance(long id, String secret, String name, Link owner, long leaseSeconds, long createdMicros) {
        this.id = id;
        this.secret = secret;
        this.name = name;
        this.owner = owner;
        this.leaseMicros = leaseSeconds * 1_000_000L;
        this.createdMicros = createdMicros;
    }

    /** Its share (see {@link #stride}); a positive number. */
    void share(double share) {
        if (!(share > 0) || Double.isInfinite(share)) {
            throw new IllegalArgumentException("a share must be a positive number, got " + share);
        }
        stride = Math.max(1, Math.round(TaskQueue.STRIDE_UNIT / share));
    }

    double share() {
        return (double) TaskQueue.STRIDE_UNIT / stride;
    }

    long stride() {
        return stride;
    }

    /** Its dataflow, made with the first task of it that others can wait for. */
    Dataflow producing() {
        if (dataflow == null) {
            dataflow = new Dataflow();
        }
        return dataflow;
    }

    /** Records a client task id as taken. */
    void accept(long clientTaskId) {
        accepted.add(clientTaskId);
    }

    boolean hasAccepted(long clientTaskId) {
        return accepted.contains(clientTaskId);
    }

    /** The ids a journal recorded (ranges from {@link InstanceRecord#acceptedRanges()}). */
    void restoreAccepted(long[] ranges) {
        accepted.addAll(ranges);
    }

    /** The sequence number of the next retained result, used up. */
    long takeSeq() {
        return nextSeq++;
    }

    /** A journal shows {@code seq} was given out: later results continue after it. */
    void seqUsed(long seq) {
        nextSeq = Math.max(nextSeq, seq + 1);
    }

    /** The last sequence number given out, 0 for none. */
    long lastSeq() {
        return nextSeq - 1;
    }

    /** HALT: nothing more of it starts. */
    void halt() {
        halted = true;
    }

    boolean halted() {
        return halted;
    }

    /** The highest client task id accepted, -1 for none. */
    long highestClientTaskId() {
        return accepted.highest();
    }

    /** Whether {@code presented} is this instance's secret (compared in constant time). */
    boolean secretMatches(String presented) {
        return presented != null && MessageDigest.isEqual(secret.getBytes(StandardCharsets.UTF_8),
                presented.getBytes(StandardCharsets.UTF_8));
    }

    InstanceRecord record() {
        return new InstanceRecord(id, name, secret, leaseMicros / 1_000_000, createdMicros, accepted.highest(),
                accepted.toArray());
    }

    /** Whether the lease has run out at {@code tickMicros}: detached that long, or (WS) not called that long. */
    boolean leaseExpired(long tickMicros) {
        if (detached) {
            return detachedMicros + leaseMicros <= tickMicros;
        }
        return owner != null && owner.leaseRunsWhileAttached() && leaseMicros > 0
                && lastRequestMicros + leaseMicros <= tickMicros;
    }

    /** The results it keeps in memory for redelivery, read-only. */
    Collection<Message.DeliveredResult> retainedInMemory() {
        return Collections.unmodifiableCollection(unacked);
    }

    /** Results kept for redelivery, in memory and in the spill. */
    long unackedCount() {
        return unacked.size() + spilledUnacked();
    }

    long spilledUnacked() {
        return spilling ? Math.max(0, spilledThroughSeq - Math.max(ackedSeq, spilledFromSeq - 1)) : 0;
    }

    boolean retainsResults() {
        return leaseMicros > 0;
    }

    /** Finished neither with success nor cancelled. */
    long failed() {
        return completed - succeeded - cancelled;
    }

    static long footprint(Message.DeliveredResult r) {
        return 160 + r.execution().stdout().length + r.execution().stderr().length + 2L * r.execution().detail().length();
    }
}
