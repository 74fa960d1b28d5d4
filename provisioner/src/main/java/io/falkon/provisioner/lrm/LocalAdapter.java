package io.falkon.provisioner.lrm;

import io.falkon.provisioner.JobRequest;
import io.falkon.provisioner.JobState;
import io.falkon.provisioner.LrmAdapter;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
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

/**
 * This machine as the "scheduler": an allocation of N nodes is N executor processes started here.
 * An optional start delay emulates a batch queue's allocation latency (which cannot be produced on
 * one machine otherwise): the job stays {@link JobState#QUEUED} that long before its processes
 * start. The embedded default, and the adapter of the time-scaled provisioning benchmark.
 */
public final class LocalAdapter implements LrmAdapter, AutoCloseable {
    private final Duration startDelay;
    private final ScheduledExecutorService starter = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "falkon-local-lrm");
        t.setDaemon(true);
        return t;
    });
    private final Map<String, Job> jobs = new ConcurrentHashMap<>();
    private final AtomicInteger ids = new AtomicInteger();

    private static final class Job {
        final List<Process> processes = new ArrayList<>();
        boolean started;
        boolean cancelled;
    }

    public LocalAdapter(Duration startDelay) {
        this.startDelay = startDelay;
    }

    @Override
    public String name() {
        return "local";
    }

    @Override
    public String script(JobRequest r) {
        StringBuilder b = new StringBuilder("#!/bin/sh\n# " + r.nodes() + " executor(s) on this machine\n");
        for (int i = 0; i < r.nodes(); i++) {
            b.append("sh -c ").append(JobRequest.quote(r.nodeCommand())).append(" &\n");
        }
        return b.append("wait\n").toString();
    }

    @Override
    public String submit(JobRequest r) throws IOException {
        Files.createDirectories(r.workDir());
        String id = "local-" + ids.incrementAndGet();
        Job job = new Job();
        jobs.put(id, job);
        starter.schedule(() -> start(id, job, r), startDelay.toMillis(), TimeUnit.MILLISECONDS);
        return id;
    }

    private void start(String id, Job job, JobRequest r) {
        synchronized (job) {
            if (job.cancelled) {
                return;
            }
            job.started = true;
            for (int i = 0; i < r.nodes(); i++) {
                try {
                    File log = r.workDir().resolve(id + "-" + i + ".out").toFile();
                    job.processes.add(new ProcessBuilder("sh", "-c", r.nodeCommand()).redirectErrorStream(true)
                            .redirectOutput(log).redirectInput(new File("/dev/null")).start());
                } catch (IOException e) {
                    // the node "failed": the job runs with fewer executors, as on a real cluster
                    org.slf4j.LoggerFactory.getLogger(LocalAdapter.class).warn("{}: cannot start an executor: {}", id,
                            e.getMessage());
                }
            }
        }
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
                if (job.cancelled) {
                    out.put(id, job.processes.stream().anyMatch(Process::isAlive) ? JobState.RUNNING : JobState.DONE);
                } else if (!job.started) {
                    out.put(id, JobState.QUEUED);
                } else {
                    out.put(id, job.processes.stream().anyMatch(Process::isAlive) ? JobState.RUNNING : JobState.DONE);
                }
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
        synchronized (job) {
            job.cancelled = true;
            for (Process p : job.processes) {
                p.descendants().forEach(ProcessHandle::destroy);
                p.destroy(); // SIGTERM: the executor kills its tasks and leaves
            }
        }
    }

    /** Cancels every job and stops. */
    @Override
    public void close() {
        jobs.keySet().forEach(this::cancel);
        starter.shutdownNow();
    }
}
