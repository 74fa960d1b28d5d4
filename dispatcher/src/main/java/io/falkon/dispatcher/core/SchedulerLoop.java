package io.falkon.dispatcher.core;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * The one thread that owns the {@link Scheduler}. Transports hand it events with
 * {@link #execute}; it runs them in arrival order, and whenever its inbox runs dry (or after
 * {@value #MAX_BATCH} events) it calls {@link Scheduler#endBatch()} so that a burst of events
 * costs one scheduling round and one write per connection.
 */
public final class SchedulerLoop implements Executor, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SchedulerLoop.class);
    static final int MAX_BATCH = 4096;
    private static final long TIMER_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final Scheduler scheduler;
    private final Queue<Runnable> inbox = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean sleeping = new AtomicBoolean();
    private final Thread thread;
    private volatile boolean stopping;

    public SchedulerLoop(Scheduler scheduler) {
        this.scheduler = scheduler;
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

    @Override
    public void execute(Runnable event) {
        inbox.add(event);
        if (sleeping.get()) {
            LockSupport.unpark(thread);
        }
    }

    private void run() {
        int batch = 0;
        long lastTimer = System.nanoTime();
        while (true) {
            long now = System.nanoTime();
            if (now - lastTimer >= TIMER_NANOS) {
                lastTimer = now;
                try {
                    scheduler.onTimer();
                } catch (RuntimeException | Error e) {
                    log.error("scheduler timer failed; the dispatcher carries on", e);
                }
            }
            Runnable event = inbox.poll();
            if (event != null) {
                try {
                    event.run();
                } catch (RuntimeException | Error e) {
                    log.error("scheduler event failed; the dispatcher carries on", e);
                }
                if (++batch < MAX_BATCH) {
                    continue;
                }
            }
            if (batch > 0) {
                endBatch();
                batch = 0;
                continue;
            }
            if (stopping) {
                return;
            }
            // nothing to do: sleep until an event arrives (re-check after announcing it)
            sleeping.set(true);
            if (inbox.isEmpty()) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
            }
            sleeping.set(false);
        }
    }

    private void endBatch() {
        try {
            scheduler.endBatch();
        } catch (RuntimeException | Error e) {
            log.error("scheduling round failed; the dispatcher carries on", e);
        }
    }

    /** Runs what is queued, then stops the thread. */
    @Override
    public void close() {
        stopping = true;
        LockSupport.unpark(thread);
        try {
            thread.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
