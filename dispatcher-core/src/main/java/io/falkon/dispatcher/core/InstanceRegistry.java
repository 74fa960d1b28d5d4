package io.falkon.dispatcher.core;

import io.falkon.protocol.Message;
import io.falkon.protocol.auth.Token;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The clients' instances: who owns each (the connection that created or re-attached it), which
 * connections are clients at all (backpressure pauses them), the leases of detached instances, and
 * the results kept for redelivery until the client acknowledges them, with the heap they hold.
 */
final class InstanceRegistry {
    private final Map<Long, Instance> instances = new HashMap<>();
    private final Map<Link, List<Instance>> byOwner = new HashMap<>();
    private final Set<Link> clients = new HashSet<>();
    private long retainedBytes;
    private final ResultSpill spill;
    /** Retained results beyond this many bytes in memory go to the spill. */
    private final long spillAboveBytes;

    /** The share of an instance of each name (fair share: the dispatcher's --share-file). */
    private final java.util.function.ToDoubleFunction<String> shareOf;

    InstanceRegistry(ResultSpill spill, long spillAboveBytes) {
        this(spill, spillAboveBytes, name -> 1.0);
    }

    InstanceRegistry(ResultSpill spill, long spillAboveBytes, java.util.function.ToDoubleFunction<String> shareOf) {
        this.spill = spill;
        this.spillAboveBytes = spillAboveBytes;
        this.shareOf = shareOf;
    }

    /** Remembers that {@code link} is a client connection (so backpressure reaches it). */
    void client(Link link) {
        clients.add(link);
    }

    Set<Link> clients() {
        return clients;
    }

    Instance create(Link owner, String name, long leaseSeconds, long createdMicros) {
        // the id and the secret that re-attaches the instance: unguessable, from a strong generator
        byte[] random = new byte[24];
        long id;
        do {
            Token.randomBytes(random);
            id = ByteBuffer.wrap(random).getLong();
        } while (id == 0 || instances.containsKey(id));
        byte[] secret = Arrays.copyOfRange(random, 8, 24);
        Instance in = new Instance(id, HexFormat.of().formatHex(secret), name, owner, leaseSeconds, createdMicros);
        in.share(shareOf.applyAsDouble(name));
        instances.put(id, in);
        own(owner, in);
        return in;
    }

    Instance get(long id) {
        return instances.get(id);
    }

    /** The instance if {@code link} owns it, else null; a request from its owner renews an idle lease. */
    Instance owned(Link link, long id, long tickMicros) {
        Instance in = instances.get(id);
        if (in == null || in.owner != link) {
            return null;
        }
        in.lastRequestMicros = tickMicros;
        return in;
    }

    /** Makes {@code link} the instance's owner, taking it from the previous one. */
    void attach(Instance in, Link link) {
        if (in.owner != null && in.owner != link) {
            disown(in);
        }
        in.owner = link;
        in.detached = false;
        own(link, in);
    }

    /** Renews an idle lease (a request from the owner). */
    void touched(Instance in, long tickMicros) {
        in.lastRequestMicros = tickMicros;
    }

    private void own(Link link, Instance in) {
        if (link == null) {
            return;
        }
        List<Instance> owned = byOwner.computeIfAbsent(link, k -> new ArrayList<>(1));
        if (!owned.contains(in)) {
            owned.add(in);
        }
    }

    private void disown(Instance in) {
        List<Instance> owned = byOwner.get(in.owner);
        if (owned != null) {
            owned.remove(in);
            if (owned.isEmpty()) {
                byOwner.remove(in.owner);
            }
        }
    }

    /** The connection closed: forgets it as a client and returns the instances it owned. */
    List<Instance> disconnected(Link link) {
        clients.remove(link);
        List<Instance> owned = byOwner.remove(link);
        return owned == null ? List.of() : owned;
    }

    /** The instance outlives its connection for its lease, from {@code tickMicros}. */
    void detach(Instance in, long tickMicros) {
        in.owner = null;
        in.detached = true;
        in.detachedMicros = tickMicros;
    }

    /** Forgets the instance and the results it kept. */
    void forget(Instance in) {
        instances.remove(in.id);
        in.gone = true;
        retainedBytes -= in.unackedBytes;
        in.unacked.clear();
        in.unackedBytes = 0;
        unspill(in);
        if (in.owner != null) {
            disown(in);
        }
    }

    /**
     * Keeps a final result for redelivery until it is acknowledged: in memory while the retained
     * results fit their share, else (and for the rest of the instance's results) in the spill.
     */
    void retain(Instance in, Message.DeliveredResult r) {
        long bytes = Instance.footprint(r);
        if ((in.spilling || retainedBytes + bytes > spillAboveBytes) && spill.append(in.id, r)) {
            if (!in.spilling) {
                in.spilling = true;
                in.spilledFromSeq = r.seq();
            }
            in.spilledThroughSeq = r.seq();
            return;
        }
        in.unacked.addLast(r);
        in.unackedBytes += bytes;
        retainedBytes += bytes;
    }

    /** Every result kept for the instance, in memory first, then in the spill (in seq order within each). */
    void forEachRetained(Instance in, Consumer<Message.DeliveredResult> each) {
        in.unacked.forEach(each);
        if (in.spilling) {
            spill.forEach(in.id, in.ackedSeq, each);
        }
    }

    private void unspill(Instance in) {
        if (in.spilling) {
            spill.drop(in.id);
            in.spilling = false;
        }
    }

    /** Drops the results up to {@code upToSeq}; true if any was dropped. */
    boolean acknowledge(Instance in, long upToSeq) {
        boolean dropped = false;
        while (!in.unacked.isEmpty() && in.unacked.peekFirst().seq() <= upToSeq) {
            Message.DeliveredResult r = in.unacked.pollFirst();
            long bytes = Instance.footprint(r);
            in.unackedBytes -= bytes;
            retainedBytes -= bytes;
            dropped = true;
        }
        if (in.spilling && upToSeq > in.ackedSeq) {
            in.ackedSeq = upToSeq;
            dropped = true;
            if (upToSeq >= in.spilledThroughSeq) {
                unspill(in); // every spilled result acknowledged
            }
        }
        return dropped;
    }

    /** Instances whose lease has run out at {@code tickMicros}. */
    List<Instance> expired(long tickMicros) {
        List<Instance> out = null;
        for (Instance in : instances.values()) {
            if (in.leaseExpired(tickMicros)) {
                (out == null ? out = new ArrayList<>() : out).add(in);
            }
        }
        return out == null ? List.of() : out;
    }

    /** Re-creates an instance from the journal, detached, its lease starting at {@code tickMicros}. */
    Instance restore(InstanceRecord r, long tickMicros) {
        Instance in = new Instance(r.id(), r.secret(), r.name(), null, r.leaseSeconds(), r.createdMicros());
        in.share(shareOf.applyAsDouble(r.name()));
        in.restoreAccepted(r.acceptedRanges());
        detach(in, tickMicros);
        instances.put(r.id(), in);
        return in;
    }

    Collection<Instance> all() {
        return instances.values();
    }

    int size() {
        return instances.size();
    }

    long detachedCount() {
        return instances.values().stream().filter(i -> i.owner == null).count();
    }

    /** Bytes of retained results held in memory (the spill's are on disk). */
    long retainedBytes() {
        return retainedBytes;
    }

    ResultSpill spill() {
        return spill;
    }
}
