package io.falkon.executor.run;

import io.falkon.protocol.Execution;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskStatus;
import io.falkon.protocol.time.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.ArrayDeque;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;

/**
 * The executor's slots: one long-lived thread per slot, each taking jobs from a shared queue and
 * running them with its own {@link TaskRunner}. The dispatcher never sends more jobs than there
 * are free slots (plus the prefetch), so the queue holds at most a few.
 *
 * <p>A job that states several cores takes that many slots: it starts once they are free, and the
 * threads of the slots it holds stay idle meanwhile. The queue is first in, first out: a job of
 * several cores at its head is not overtaken here, so it cannot starve (the dispatcher keeps other
 * work away from an executor it is waiting for). The Java executor does not confine a task to CPUs
 * of its own; the C executor does when its slots are pinned.
 */
public final class SlotPool implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SlotPool.class);

    /** Which {@link TaskRunner} to use. */
    public enum Runner {
        /** posix_spawn where available, else the JDK. */
        AUTO,
        POSIX,
        JDK
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    /** Signalled when a save handed to another thread ends ({@link #saveElsewhere}). */
    private final Condition saved = lock.newCondition();
    /** Finished tasks whose outputs another thread is saving (under the lock). */
    private int saving;
    /**
     * Threads that save finished tasks' outputs (made on demand, gone when idle; each pool keeps at
     * most as many busy as it has slots).
     */
    private static final ExecutorService SAVERS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "falkon-save");
        t.setDaemon(true);
        return t;
    });
    /** Jobs received and not yet started (under the lock). */
    private final ArrayDeque<Job> queue = new ArrayDeque<>();
    /** Slots not taken by a running job (under the lock). */
    private int freeSlots;
    private final int slots;
    /** The queue's length, read without the lock. */
    private final AtomicInteger waiting = new AtomicInteger();
    private final List<TaskRunner> runners = new ArrayList<>();
    /** Each slot's persistent worker, if it has one (docs/protocol.md section 9). */
    private final List<ResidentWorker> workers = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final BiConsumer<Job, Message.TaskResult> done;
    private final ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "falkon-watchdog");
        t.setDaemon(true);
        return t;
    });
    private final String runnerName;
    private final Staging staging;
    /** Jobs submitted and not yet reported (waiting or running): what makes the executor busy. */
    private final AtomicInteger held = new AtomicInteger();
    /** The named resources it offers (GPUs, licences), under the lock; null when it offers none. */
    private final Devices devices;
    private volatile boolean closing;

    /**
     * @param done called with each finished job and its result, on a slot thread or on the thread
     *             that saved the job's outputs
     */
    public SlotPool(int slots, Runner kind, Path spoolDir, int outputCap, long spoolLimit, Path workDir,
                    WorkerLimits workerLimits, Staging staging, BiConsumer<Job, Message.TaskResult> done) {
        this(slots, kind, spoolDir, outputCap, spoolLimit, workDir, workerLimits, staging, List.of(), done);
    }

    /**
     * @param resources the named resources it offers (GPUs, licences): a task that asks for some
     *                  starts once they are free, and gets its devices in its environment
     * @param done      called with each finished job and its result, on a slot thread or on the
     *                  thread that saved the job's outputs
     */
    public SlotPool(int slots, Runner kind, Path spoolDir, int outputCap, long spoolLimit, Path workDir,
                    WorkerLimits workerLimits, Staging staging, List<ResourceOffer> resources,
                    BiConsumer<Job, Message.TaskResult> done) {
        this.devices = Devices.of(resources, slots);
        this.done = done;
        this.staging = staging;
        this.slots = slots;
        this.freeSlots = slots;
        boolean posix = switch (kind) {
            case POSIX -> true;
            case JDK -> false;
            case AUTO -> {
                if (!PosixRunner.available()) {
                    log.info("posix_spawn runner unavailable ({}); using the JDK's ProcessBuilder",
                            PosixRunner.unavailableReason());
                }
                yield PosixRunner.available();
            }
        };
        runnerName = posix ? "posix_spawn" : "jdk";
        List<PosixRunner> posixRunners = new ArrayList<>();
        for (int i = 0; i < slots; i++) {
            TaskRunner runner;
            if (posix) {
                PosixRunner p = new PosixRunner(spoolDir, i, outputCap, spoolLimit, workDir, watchdog);
                posixRunners.add(p);
                runner = p;
            } else {
                runner = new JdkRunner(spoolDir, i, outputCap, spoolLimit, workDir);
            }
            ResidentWorker slot = new ResidentWorker(new ShellFallback(runner), outputCap, workDir, workerLimits,
                    watchdog);
            runners.add(slot);
            workers.add(slot);
            int index = i;
            Thread t = new Thread(() -> work(slot, index), "falkon-slot-" + i);
            t.setDaemon(true);
            threads.add(t);
        }
        threads.forEach(Thread::start);
        if (!posixRunners.isEmpty()) {
            watchdog.scheduleWithFixedDelay(() -> posixRunners.forEach(PosixRunner::checkSpool), 1, 1,
                    TimeUnit.SECONDS);
        }
    }

    /** {@code posix_spawn} or {@code jdk}: how this pool starts processes. */
    public String runnerName() {
        return runnerName;
    }

    /** The named resources it offers, for its registration; null for none. */
    public io.falkon.protocol.NamedResources offered() {
        return devices == null ? null : devices.offered();
    }

    public void submit(Job job) {
        // the dispatcher sends a task only where it fits: one that does not was meant for another executor
        String problem = job.cores() > slots ? "needs " + job.cores() + " cores; this executor has " + slots + " slots"
                : resourcesProblem(job);
        if (problem != null) {
            done.accept(job, new Message.TaskResult(job.taskId(), job.attempt(), Execution.of(TaskStatus.REJECTED,
                    Execution.PERMANENT, problem, Clock.SYSTEM.nowMicros())));
            return;
        }
        held.incrementAndGet();
        lock.lock();
        try {
            queue.add(job);
            waiting.incrementAndGet();
            changed.signal();
        } finally {
            lock.unlock();
        }
    }

    /** Why this executor could never hold the named resources {@code job} asks for, or null. */
    private String resourcesProblem(Job job) {
        io.falkon.protocol.NamedResources asked;
        try {
            asked = job.spec().namedResources();
        } catch (io.falkon.protocol.ProtocolException e) {
            return e.getMessage(); // the dispatcher checks the field: not from it
        }
        if (devices != null) {
            return devices.problem(asked);
        }
        return asked == null ? null : "needs " + asked + "; this executor offers no named resources";
    }

    /** Jobs waiting or running: zero means the executor holds no task. */
    public int held() {
        return held.get();
    }

    /** Jobs received and not yet started by a slot. */
    public int queued() {
        return waiting.get();
    }

    /**
     * The queue's head once its slots and named resources are free, taken for {@code slot}; null when
     * closing or interrupted. With named resources on offer, the job comes back with their variables
     * in its environment.
     */
    private Taken take(int slot) {
        lock.lock();
        try {
            Job head;
            while (!closing && ((head = queue.peek()) == null || head.cores() > freeSlots
                    || (devices != null && !devices.free(head.spec().namedResources())))) {
                changed.await();
            }
            if (closing) {
                return null;
            }
            Job job = queue.poll();
            waiting.decrementAndGet();
            freeSlots -= job.cores();
            if (devices == null) {
                return new Taken(job, null);
            }
            Devices.Grant grant = devices.take(job.spec().namedResources(), slot);
            return new Taken(job.withEnv(grant.env()), grant);
        } catch (InterruptedException e) {
            return null;
        } finally {
            lock.unlock();
        }
    }

    private void release(Job job, Devices.Grant grant) {
        lock.lock();
        try {
            freeSlots += job.cores();
            if (grant != null) {
                devices.give(grant);
            }
            if (job.cores() > 1 || (grant != null && grant.taken() != null)) {
                changed.signalAll(); // room for several waiting jobs
            }
        } finally {
            lock.unlock();
        }
    }

    private void work(TaskRunner runner, int slot) {
        while (!closing) {
            Taken taken = take(slot);
            if (taken == null) {
                return;
            }
            Job job = taken.job;
            Execution x;
            Staging.Ran ran = null;
            try {
                if (Staging.needed(job.spec())) {
                    ran = staging.begin(job, runner);
                    x = ran.done() ? ran.result() : null;
                } else {
                    x = runner.run(job.taskId(), job.spec());
                }
            } catch (RuntimeException e) {
                x = executorError(job, e);
            }
            release(job, taken.grant);
            if (x == null && saveElsewhere(job, ran)) {
                continue; // the slot takes its next job while the outputs are saved
            }
            report(job, x != null ? x : finish(job, ran));
        }
    }

    private static Execution executorError(Job job, RuntimeException e) {
        log.error("task {} failed inside the executor", job.taskId(), e);
        return Execution.of(TaskStatus.LAUNCH_FAILED, "executor error: " + e, Clock.SYSTEM.nowMicros());
    }

    private Execution finish(Job job, Staging.Ran ran) {
        try {
            return staging.finish(ran);
        } catch (RuntimeException e) {
            return executorError(job, e);
        }
    }

    private void report(Job job, Execution x) {
        try {
            done.accept(job, new Message.TaskResult(job.taskId(), job.attempt(), x));
        } finally {
            held.decrementAndGet();
        }
    }

    /**
     * Hands the rest of a staged task (saving its outputs, removing its sandbox, reporting its
     * result) to a thread of its own, as the C executor does: an output forced to disk takes
     * milliseconds the slot would otherwise sit idle (docs/executor-c.md). At most one such thread
     * per slot; beyond that, and while the pool closes, the slot does it itself.
     *
     * @return false when the slot is to finish the task itself
     */
    private boolean saveElsewhere(Job job, Staging.Ran ran) {
        lock.lock();
        try {
            if (closing || saving >= slots) {
                return false;
            }
            saving++;
        } finally {
            lock.unlock();
        }
        SAVERS.execute(() -> {
            try {
                report(job, finish(job, ran));
            } finally {
                lock.lock();
                try {
                    saving--;
                    saved.signalAll();
                } finally {
                    lock.unlock();
                }
            }
        });
        return true;
    }

    /** A job a slot took, and the named resources it holds (null when the executor offers none). */
    private record Taken(Job job, Devices.Grant grant) {
    }

    /** Cancels a task whether it is waiting or running; its result is still reported. */
    public void cancel(long taskId) {
        Job removed = null;
        lock.lock();
        try {
            for (java.util.Iterator<Job> it = queue.iterator(); it.hasNext(); ) {
                Job j = it.next();
                if (j.taskId() == taskId) {
                    it.remove();
                    waiting.decrementAndGet();
                    changed.signalAll(); // it may have held up the jobs behind it
                    removed = j;
                    break;
                }
            }
        } finally {
            lock.unlock();
        }
        if (removed != null) {
            try {
                done.accept(removed, new Message.TaskResult(taskId, removed.attempt(),
                        Execution.of(TaskStatus.CANCELLED, "cancelled before it started", Clock.SYSTEM.nowMicros())));
            } finally {
                held.decrementAndGet();
            }
            return;
        }
        for (TaskRunner r : runners) {
            if (r.cancel(taskId)) {
                return;
            }
        }
    }

    /** Drops every waiting job and kills every running one (their results still go to the callback). */
    public void cancelAll() {
        dropQueued();
        runners.forEach(TaskRunner::killCurrent);
    }

    private void dropQueued() {
        int dropped;
        lock.lock();
        try {
            dropped = queue.size();
            queue.clear();
            waiting.addAndGet(-dropped);
        } finally {
            lock.unlock();
        }
        held.addAndGet(-dropped);
    }

    /** Kills every running task and stops the slot threads. */
    @Override
    public void close() {
        closing = true;
        dropQueued();
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        runners.forEach(TaskRunner::killCurrent);
        workers.forEach(ResidentWorker::close);
        watchdog.shutdownNow();
        threads.forEach(Thread::interrupt);
        for (Thread t : threads) {
            try {
                t.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        awaitSaves();
    }

    /** Waits for the saves handed to other threads: their results are reported, their sandboxes gone. */
    private void awaitSaves() {
        lock.lock();
        try {
            long left = TimeUnit.SECONDS.toNanos(SAVE_WAIT_SECONDS);
            while (saving > 0 && left > 0) {
                left = saved.awaitNanos(left);
            }
            if (saving > 0) {
                // as a slot thread still saving after its join times out: the result is not reported,
                // and the dispatcher runs the task again (an output is renamed into place whole or not at all)
                log.warn("{} finished tasks were still saving their outputs after {} s; not waiting longer", saving,
                        SAVE_WAIT_SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lock.unlock();
        }
    }

    /** How long {@link #close} waits for the saves handed to other threads. */
    private static final long SAVE_WAIT_SECONDS = 60;
}
