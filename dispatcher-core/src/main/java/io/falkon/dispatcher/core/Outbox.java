package io.falkon.dispatcher.core;

import io.falkon.protocol.Message;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a batch of events sends, gathered until the batch ends: messages per connection, each
 * executor's assignments (one DISPATCH per round, split only where a frame would outgrow the
 * executor's limit), each instance's new results (one DELIVER). At the end of the batch every
 * connection's messages are taken at once and handed to the journal, which sends them after the
 * batch's records are durable: one write per connection per batch.
 */
final class Outbox {
    private static final Runnable NOTHING_TO_SEND = () -> {
    };
    /** Bytes a DISPATCH frame spends besides its tasks' specs (header, ids, ext), per task and per frame. */
    static final int DISPATCH_OVERHEAD_PER_TASK = 64;
    static final int FRAME_OVERHEAD = 64;

    private final long maxDispatchBytes;
    private final List<Link> dirty = new ArrayList<>();
    /** This round's DISPATCH bundles, by executor and in the order they were begun. */
    private final Map<ExecutorState, Bundle> bundles = new IdentityHashMap<>();
    private final List<Bundle> bundled = new ArrayList<>();
    /** This batch's DELIVERs, by instance and in the order they were begun. */
    private final Map<Instance, Delivery> deliveries = new IdentityHashMap<>();
    private final List<Delivery> delivering = new ArrayList<>();

    /** @param maxFrameBytes the executors' frame limit: no DISPATCH grows beyond it */
    Outbox(long maxFrameBytes) {
        this.maxDispatchBytes = maxFrameBytes - FRAME_OVERHEAD;
    }

    void send(Link link, Message m) {
        if (link.enqueue(m)) {
            dirty.add(link);
        }
    }

    /** Adds an assigned task to the executor's bundle of this round. */
    void dispatch(ExecutorState e, Message.DispatchedTask t) {
        long bytes = t.spec().length + DISPATCH_OVERHEAD_PER_TASK + extBytes(t);
        Bundle b = bundles.get(e);
        if (b == null) {
            b = new Bundle(e);
            bundles.put(e, b);
            bundled.add(b);
        } else if (!b.tasks.isEmpty() && b.bytes + bytes > maxDispatchBytes) {
            send(e.link, new Message.Dispatch(b.tasks)); // a full frame goes now; the round goes on
            b.begin();
        }
        b.tasks.add(t);
        b.bytes += bytes;
    }

    /** One executor's assignments of this round not sent yet, and their encoded size. */
    private static final class Bundle {
        final ExecutorState executor;
        List<Message.DispatchedTask> tasks;
        long bytes;

        Bundle(ExecutorState executor) {
            this.executor = executor;
            begin();
        }

        /** A new frame's list (the one sent belongs to its message now). */
        void begin() {
            tasks = new ArrayList<>(Math.min(executor.credits + 1, 1024));
            bytes = 0;
        }
    }

    private static long extBytes(Message.DispatchedTask t) {
        long n = 0;
        for (int i = 0, k = t.ext().size(); i < k; i++) {
            n += 6 + t.ext().get(i).value().length;
        }
        return n;
    }

    /** Adds a result to the instance's DELIVER of this batch. */
    void deliver(Instance in, Message.DeliveredResult r) {
        Delivery d = deliveries.get(in);
        if (d == null) {
            d = new Delivery(in);
            deliveries.put(in, d);
            delivering.add(d);
        }
        d.results.add(r);
    }

    /** Sends the instance's results gathered so far now, ahead of what follows (a DESTROYED reply). */
    void deliverNow(Instance in) {
        Delivery d = deliveries.get(in);
        if (d != null && !d.results.isEmpty() && in.owner != null) {
            send(in.owner, new Message.Deliver(in.id, d.results));
        }
        drop(in);
    }

    /**
     * Forgets the instance's results gathered so far (sent another way, or nobody left to send them
     * to); results that come later in the batch are gathered again.
     */
    void drop(Instance in) {
        Delivery d = deliveries.get(in);
        if (d != null && !d.results.isEmpty()) {
            d.results = new ArrayList<>(); // the old list may belong to a message now
        }
    }

    /** One instance's results of this batch not sent yet. */
    private static final class Delivery {
        final Instance instance;
        List<Message.DeliveredResult> results = new ArrayList<>();

        Delivery(Instance instance) {
            this.instance = instance;
        }
    }

    /** Turns the round's bundles and results into messages. */
    void endRound() {
        for (int i = 0, n = bundled.size(); i < n; i++) {
            Bundle b = bundled.get(i);
            if (b.executor.alive && !b.tasks.isEmpty()) {
                send(b.executor.link, new Message.Dispatch(b.tasks));
            }
        }
        bundled.clear();
        bundles.clear();
        for (int i = 0, n = delivering.size(); i < n; i++) {
            Delivery d = delivering.get(i);
            Instance in = d.instance;
            if (!d.results.isEmpty() && !in.gone && in.owner != null) {
                send(in.owner, new Message.Deliver(in.id, d.results));
            }
        }
        delivering.clear();
        deliveries.clear();
    }

    /** Hands every connection's messages to the journal, which sends them once the batch is durable. */
    void commit(Journal journal) {
        if (dirty.isEmpty()) {
            journal.commit(NOTHING_TO_SEND); // records without replies (an ACK) still become durable
            return;
        }
        List<Runnable> sends = new ArrayList<>(dirty.size());
        for (int i = 0, n = dirty.size(); i < n; i++) {
            Runnable r = dirty.get(i).takeFlush();
            if (r != null) {
                sends.add(r);
            }
        }
        dirty.clear();
        journal.commit(() -> {
            for (int i = 0, n = sends.size(); i < n; i++) {
                sends.get(i).run();
            }
        });
    }
}
