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
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

/**
 * The executor's slots: one long-lived thread per slot, each taking jobs from a shared queue and
 * running them with its own {@link TaskRunner}. The dispatcher never sends more jobs than there
 * are free slots, so the queue holds at most a few.
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

    private final BlockingQueue<Job> queue = new LinkedBlockingQueue<>();
    private final List<TaskRunner> runners = new ArrayList<>();
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
    private volatile boolean closing;

    /**
     * @param done called on a slot thread with each finished job and its result
     */
    public SlotPool(int slots, Runner kind, Path spoolDir, int outputCap, long spoolLimit, Path workDir,
                    Staging staging, BiConsumer<Job, Message.TaskResult> done) {
        this.done = done;
        this.staging = staging;
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
            runners.add(runner);
            TaskRunner slot = new ShellFallback(runner);
            Thread t = new Thread(() -> work(slot), "falkon-slot-" + i);
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

    public void submit(Job job) {
        held.incrementAndGet();
        queue.add(job);
    }

    /** Jobs waiting or running: zero means the executor holds no task. */
    public int held() {
        return held.get();
    }

    /** Jobs received and not yet started by a slot. */
    public int queued() {
        return queue.size();
    }

    private void work(TaskRunner runner) {
        while (!closing) {
            Job job;
            try {
                job = queue.take();
            } catch (InterruptedException e) {
                return;
            }
            Execution x;
            try {
                x = Staging.needed(job.spec()) ? staging.run(job, runner) : runner.run(job.taskId(), job.spec());
            } catch (RuntimeException e) {
                log.error("task {} failed inside the executor", job.taskId(), e);
                x = Execution.of(TaskStatus.LAUNCH_FAILED, "executor error: " + e, Clock.SYSTEM.nowMicros());
            }
            try {
                done.accept(job, new Message.TaskResult(job.taskId(), job.attempt(), x));
            } finally {
                held.decrementAndGet();
            }
        }
    }

    /** Cancels a task whether it is waiting or running; its result is still reported. */
    public void cancel(long taskId) {
        for (Job j : queue) {
            if (j.taskId() == taskId && queue.remove(j)) {
                try {
                    done.accept(j, new Message.TaskResult(taskId, j.attempt(),
                            Execution.of(TaskStatus.CANCELLED, "cancelled before it started", Clock.SYSTEM.nowMicros())));
                } finally {
                    held.decrementAndGet();
                }
                return;
            }
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
        List<Job> dropped = new ArrayList<>();
        queue.drainTo(dropped);
        held.addAndGet(-dropped.size());
    }

    /** Kills every running task and stops the slot threads. */
    @Override
    public void close() {
        closing = true;
        dropQueued();
        runners.forEach(TaskRunner::killCurrent);
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
    }
}
