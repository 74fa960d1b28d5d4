package io.falkon.dispatcher.core;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The one thread that owns the {@link Scheduler}. Transports hand it events with
 * {@link #execute}; it runs them in arrival order, and whenever its inbox runs dry (or after
 * {@value #MAX_BATCH} events) it calls {@link Scheduler#endBatch()} so that a burst of events
 * costs one scheduling round and one write per connection.
 *
 * <p>An event that throws leaves the scheduler's state half-updated: the loop does not carry on
 * with it. It stops, completes {@link #failed()} with the cause, and drops every later event; its
 * owner stops the dispatcher so that a supervisor, or the journal restart, takes over. With
 * assertions on ({@code -ea}) the loop also checks the scheduler's invariants after every batch.
 *
 * <p>The inbox is bounded where it could grow without bound: SUBMIT bundles. Transports read every
 * connection all the time (so that acknowledgements always get through), and a client may send all
 * its bundles at once; the memory budget refuses bundles only when the scheduler gets to them, so
 * a scheduler slowed down (by garbage collection in a small heap, say) would otherwise let decoded
 * bundles pile up here until the heap ran out. {@link #offerBundle} refuses a bundle instead when
 * those waiting already hold {@value #PENDING_BUNDLES_SHARE_DIVISOR}th of the budget.
 */
public final class SchedulerLoop implements Executor, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SchedulerLoop.class);
    static final int MAX_BATCH = 4096;
    static final long TIMER_MILLIS = 100;
    private static final long TIMER_NANOS = TimeUnit.MILLISECONDS.toNanos(TIMER_MILLIS);
    private static final boolean CHECK_INVARIANTS = SchedulerLoop.class.desiredAssertionStatus();
    static final int PENDING_BUNDLES_SHARE_DIVISOR = 8;

    private final Scheduler scheduler;
    /** {@link Event}s from the transports, and {@link Runnable}s (queries from the dispatcher's owner). */
    private final Queue<Object> inbox = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean sleeping = new AtomicBoolean();
    private final Thread thread;
    private final CompletableFuture<Throwable> failed = new CompletableFuture<>();
    private volatile boolean stopping;
    /** Heap held by the SUBMIT bundles in the inbox ({@link Event#footprint()}), and its bound. */
    private final AtomicLong pendingBundleBytes = new AtomicLong();
    private final long maxPendingBundleBytes;

    public SchedulerLoop(Scheduler scheduler) {
        this.scheduler = scheduler;
        this.maxPendingBundleBytes = scheduler.config().memoryBudgetBytes() / PENDING_BUNDLES_SHARE_DIVISOR;
        this.thread = new Thread(this::run, "falkon-scheduler");
        this.thread.setDaemon(true);
    }

    public SchedulerLoop start() {
        thread.start();
        return this;
    }

    public Scheduler scheduler() {
        return scheduler;
    }

    public boolean inLoop() {
        return Thread.currentThread() == thread;
    }

    /** Completes with the cause when an event failed and the loop stopped. */
    public CompletableFuture<Throwable> failed() {
        return failed;
    }

    /** Runs {@code task} on the scheduler thread (queries and control; transports submit {@link Event}s). */
    @Override
    public void execute(Runnable task) {
        enqueue(task);
    }

    /** Hands the scheduler an event from a transport. */
    public void submit(Event event) {
        enqueue(event);
    }

    /**
     * Hands the scheduler a SUBMIT bundle ({@link Event#submit}), unless the bundles already waiting
     * for it hold more than their share of the memory budget: false then, and the bundle is the
     * caller's to refuse with {@code BUSY} (its client sends it again). One bundle is always taken
     * when none waits, however large (its size is bounded by the frame limit).
     */
    public boolean offerBundle(Event bundle) {
        long bytes = bundle.footprint();
        long held = pendingBundleBytes.addAndGet(bytes);
        if (held > maxPendingBundleBytes && held != bytes) {
            pendingBundleBytes.addAndGet(-bytes);
            return false;
        }
        enqueue(bundle);
        return true;
    }

    /** Heap held by the SUBMIT bundles waiting for the scheduler. */
    public long pendingBundleBytes() {
        return pendingBundleBytes.get();
    }

    /** The bound on {@link #pendingBundleBytes()}. */
    public long maxPendingBundleBytes() {
        return maxPendingBundleBytes;
    }

    /**
     * Hands the scheduler an event that can wait for its next wake-up, at most its timer's
     * {@value #TIMER_MILLIS} ms away: one that changes nothing anyone waits for (an ACK, which only lets
     * results go). Waking the thread costs more than most events (two context switches, across cores
     * on a busy machine), and a short task's stream of results would pay it once per delivery.
     */
    public void submitQuietly(Event event) {
        if (!failed.isDone()) {
            inbox.add(event);
        }
    }

    private void enqueue(Object item) {
        if (failed.isDone()) {
            return; // the scheduler's state is not trusted any more: nothing runs on it
        }
        inbox.add(item);
        if (sleeping.get()) {
            LockSupport.unpark(thread);
        }
    }

    private void run() {
        try {
            loop();
        } catch (Throwable e) { // NOPMD: anything thrown leaves the state half-updated
            fail(e);
        }
    }

    private void loop() {
        int batch = 0;
        long lastTimer = System.nanoTime();
        while (true) {
            long now = System.nanoTime();
            if (now - lastTimer >= TIMER_NANOS) {
                lastTimer = now;
                if (scheduler.onTimer()) {
                    batch++; // replayed tasks were released: a round, even with the inbox empty
                }
            }
            Object item = inbox.poll();
            if (item != null) {
                if (item instanceof Event event) {
                    if (event.footprint() > 0) {
                        pendingBundleBytes.addAndGet(-event.footprint());
                    }
                    scheduler.handle(event);
                } else {
                    ((Runnable) item).run();
                }
                if (++batch < MAX_BATCH) {
                    continue;
                }
            }
            if (batch > 0) {
                scheduler.endBatch();
                if (CHECK_INVARIANTS) {
                    scheduler.checkInvariants();
                }
                batch = 0;
                continue;
            }
            if (stopping) {
                return;
            }
            // nothing to do: sleep until an event arrives (re-check after announcing it)
            sleeping.set(true);
            if (inbox.isEmpty()) {
                LockSupport.parkNanos(TIMER_NANOS);
            }
            sleeping.set(false);
        }
    }

    private void fail(Throwable e) {
        inbox.clear();
        if (e instanceof OutOfMemoryError) {
            // no stack trace: building one may need the memory that ran out
            log.error("the scheduler ran out of memory ({}); stopping the dispatcher", e.getMessage());
        } else {
            log.error("a scheduler event failed; its state cannot be trusted: stopping the dispatcher", e);
        }
        failed.complete(e);
    }

    /** Runs what is queued, then stops the thread. */
    @Override
    public void close() {
        stopping = true;
        LockSupport.unpark(thread);
        if (Thread.currentThread() == thread) {
            return;
        }
        try {
            thread.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
