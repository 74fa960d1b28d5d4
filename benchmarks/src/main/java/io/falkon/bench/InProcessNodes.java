package io.falkon.bench;

import io.falkon.executor.Executor;
import io.falkon.executor.ExecutorConfig;
import io.falkon.provisioner.JobRequest;
import io.falkon.provisioner.JobState;
import io.falkon.provisioner.LrmAdapter;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * BENCHMARK ONLY: a "scheduler" whose nodes are executors started inside this JVM after an emulated
 * allocation latency, so that a time-scaled provisioning run with 32 nodes fits on a 2-core machine
 * (32 executor JVMs would spend seconds of CPU just starting). Each executor runs real processes and
 * keeps the job's {@code --slots} and {@code --idle-exit}; the rest of the executor command is not
 * used. Also accounts executor-seconds (registered time), for the resource utilization.
 */
final class InProcessNodes implements LrmAdapter, AutoCloseable {
    private final int dispatcherPort;
    private final Duration latency;
    private final ScheduledExecutorService starter = Executors.newSingleThreadScheduledExecutor();
    private final Map<String, Job> jobs = new ConcurrentHashMap<>();
    private final AtomicInteger ids = new AtomicInteger();
    private final AtomicLong registeredNanos = new AtomicLong();

    private static final class Job {
        final List<Executor> executors = new ArrayList<>();
        boolean started;
        boolean cancelled;
        int alive;
    }

    InProcessNodes(int dispatcherPort, Duration latency) {
        this.dispatcherPort = dispatcherPort;
        this.latency = latency;
    }

    @Override
    public String name() {
        return "in-process (benchmark)";
    }

    @Override
    public String script(JobRequest r) {
        return "#!/bin/sh\n# " + r.nodes() + " executor(s) inside the benchmark's JVM\n";
    }

    @Override
    public String submit(JobRequest r) {
        String id = "n" + ids.incrementAndGet();
        Job job = new Job();
        jobs.put(id, job);
        starter.schedule(() -> start(job, r), latency.toMillis(), TimeUnit.MILLISECONDS);
        return id;
    }

    private static String option(List<String> cmd, String name, String otherwise) {
        int i = cmd.indexOf(name);
        return i >= 0 && i + 1 < cmd.size() ? cmd.get(i + 1) : otherwise;
    }

    private void start(Job job, JobRequest r) {
        int slots = Integer.parseInt(option(r.executorCommand(), "--slots", "1"));
        Duration idle = Duration.ofMillis(Math.round(Double.parseDouble(option(r.executorCommand(), "--idle-exit", "0"))
                * 1000));
        synchronized (job) {
            if (job.cancelled) {
                return;
            }
            job.started = true;
            for (int i = 0; i < r.nodes(); i++) {
                long t0 = System.nanoTime();
                Executor e = Executor.start(ExecutorConfig.of("127.0.0.1", dispatcherPort).withId(r.name() + "-n" + i)
                        .withSlots(slots).withIdleExit(idle));
                job.executors.add(e);
                job.alive++;
                e.terminated().whenComplete((why, err) -> {
                    registeredNanos.addAndGet(System.nanoTime() - t0);
                    synchronized (job) {
                        job.alive--;
                    }
                });
            }
        }
    }

    /** Executor-seconds from start to exit of every executor that has exited. */
    double registeredSeconds() {
        return registeredNanos.get() / 1e9;
    }

    @Override
    public Map<String, JobState> states(Collection<String> jobIds) {
        Map<String, JobState> out = new HashMap<>();
        for (String id : jobIds) {
            Job job = jobs.get(id);
            if (job == null) {
                out.put(id, JobState.DONE);
                continue;
            }
            synchronized (job) {
                out.put(id, !job.started && !job.cancelled ? JobState.QUEUED
                        : job.alive > 0 ? JobState.RUNNING : JobState.DONE);
            }
        }
        return out;
    }

    @Override
    public void cancel(String jobId) {
        Job job = jobs.get(jobId);
        if (job == null) {
            return;
        }
        List<Executor> toClose;
        synchronized (job) {
            job.cancelled = true;
            toClose = new ArrayList<>(job.executors);
        }
        toClose.forEach(Executor::close);
    }

    @Override
    public void close() {
        jobs.keySet().forEach(this::cancel);
        starter.shutdownNow();
    }
}
