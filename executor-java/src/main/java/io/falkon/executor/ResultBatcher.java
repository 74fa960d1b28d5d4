package io.falkon.executor;

import io.falkon.protocol.time.Clock;
import io.falkon.protocol.Message;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * Finished tasks on their way back: each result returns its credit in the same RESULT frame
 * (piggy-backing), and results finishing close together share a frame. Without prefetch a result
 * goes at once; with prefetch it lingers up to {@value #LINGER_MILLIS} ms for company while jobs
 * wait locally. A result belongs to the connection its task came on: results of an older
 * connection are dropped when the frame is written (the dispatcher has re-queued those tasks), so
 * none can slip onto the next connection.
 */
final class ResultBatcher {
    /** With prefetch: results wait for company this long at most, while the slots still have work. */
    static final long LINGER_MILLIS = 20;

    private record Finished(int generation, int cores, Message.TaskResult result) {
    }

    private final EventLoop loop;
    private final Supplier<Channel> channel;
    private final IntSupplier generation;
    private final Prefetch prefetch;
    private final IntSupplier waitingJobs;
    private final ConcurrentLinkedQueue<Finished> finished = new ConcurrentLinkedQueue<>();
    private final AtomicInteger unsent = new AtomicInteger();
    private final AtomicBoolean flushScheduled = new AtomicBoolean();
    private final AtomicBoolean lingerScheduled = new AtomicBoolean();
    private final Clock clock;
    /** Runs on the I/O thread right before results are written: the cache changes pending go first. */
    private final Runnable beforeResults;
    /** Monotonic tick ({@link #clock}) of the last results sent. */
    private volatile long lastSentMicros;

    /**
     * @param channel     the connection now (null while reconnecting)
     * @param generation  the connection's generation now
     * @param waitingJobs jobs received and not started yet
     * @param beforeResults run on the I/O thread before each batch of results is written
     */
    ResultBatcher(EventLoop loop, Supplier<Channel> channel, IntSupplier generation, Prefetch prefetch,
                  IntSupplier waitingJobs, Clock clock, Runnable beforeResults) {
        this.loop = loop;
        this.clock = clock;
        this.beforeResults = beforeResults;
        this.lastSentMicros = clock.tickMicros();
        this.channel = channel;
        this.generation = generation;
        this.prefetch = prefetch;
        this.waitingJobs = waitingJobs;
    }

    /** A task of {@code cores} slots finished (on a slot thread), for the connection of {@code generation}. */
    void add(int generation, int cores, Message.TaskResult r) {
        if (generation != this.generation.getAsInt()) {
            return; // from a connection that is gone: the dispatcher has re-queued the task already
        }
        finished.add(new Finished(generation, cores, r));
        prefetch.finished(r.execution().finishedMicros() - r.execution().startedMicros());
        int waiting = unsent.incrementAndGet();
        int held = prefetch.current();
        if (held == 0 || waiting >= Math.max(1, held / 2) || waitingJobs.getAsInt() == 0) {
            if (flushScheduled.compareAndSet(false, true)) {
                loop.execute(this::flush);
            }
        } else if (lingerScheduled.compareAndSet(false, true)) {
            loop.schedule(() -> {
                lingerScheduled.set(false);
                flush();
            }, LINGER_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** On the I/O thread: every result of the current connection, with their credits (one per core), in one frame. */
    void flush() {
        flushScheduled.set(false);
        int current = generation.getAsInt();
        List<Message.TaskResult> batch = new ArrayList<>();
        Finished f;
        int taken = 0;
        int returning = 0;
        while ((f = finished.poll()) != null) {
            taken++;
            if (f.generation() == current) {
                batch.add(f.result());
                returning += f.cores();
            }
        }
        unsent.addAndGet(-taken);
        if (batch.isEmpty()) {
            return;
        }
        lastSentMicros = clock.tickMicros();
        Channel ch = channel.get();
        if (ch != null && ch.isActive()) {
            beforeResults.run();
            int credits = returning + prefetch.adjust(returning); // the prefetch follows the tasks' length
            ch.writeAndFlush(new Message.Result(credits, batch), ch.voidPromise());
        }
    }

    /** The connection is gone: what waits belongs to it. */
    void clear() {
        int n = 0;
        while (finished.poll() != null) {
            n++;
        }
        unsent.addAndGet(-n);
    }

    /** Results finished and not yet written. */
    int unsent() {
        return unsent.get();
    }

    long lastSentMicros() {
        return lastSentMicros;
    }
}
