package io.falkon.dispatcher.core;

import io.falkon.protocol.Message;

import java.util.ArrayList;
import java.util.List;

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
    private final List<ExecutorState> bundled = new ArrayList<>();
    private final List<Instance> delivering = new ArrayList<>();

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
        if (e.bundle != null && !e.bundle.isEmpty() && e.bundleBytes + bytes > maxDispatchBytes) {
            send(e.link, new Message.Dispatch(e.bundle)); // a full frame goes now; the round goes on
            e.bundle = null;
        }
        if (e.bundle == null) {
            if (!e.inBundled) {
                e.inBundled = true;
                bundled.add(e);
            }
            e.bundle = new ArrayList<>(Math.min(e.credits + 1, 1024));
            e.bundleBytes = 0;
        }
        e.bundle.add(t);
        e.bundleBytes += bytes;
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
        in.addToOutbox(r, delivering);
    }

    /** Sends the instance's results gathered so far now, ahead of what follows (a DESTROYED reply). */
    void deliverNow(Instance in) {
        if (in.outbox != null && !in.outbox.isEmpty() && in.owner != null) {
            send(in.owner, new Message.Deliver(in.id, in.outbox));
        }
        in.outbox = null;
        // it stays in 'delivering' until the batch ends, which skips an empty outbox
    }

    /** Turns the round's bundles and results into messages. */
    void endRound() {
        for (int i = 0, n = bundled.size(); i < n; i++) {
            ExecutorState e = bundled.get(i);
            e.inBundled = false;
            if (e.alive && e.bundle != null && !e.bundle.isEmpty()) {
                send(e.link, new Message.Dispatch(e.bundle));
            }
            e.bundle = null;
        }
        bundled.clear();
        for (int i = 0, n = delivering.size(); i < n; i++) {
            Instance in = delivering.get(i);
            in.inOutboxList = false;
            if (in.outbox != null && !in.outbox.isEmpty() && !in.gone && in.owner != null) {
                send(in.owner, new Message.Deliver(in.id, in.outbox));
            }
            in.outbox = null;
        }
        delivering.clear();
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
