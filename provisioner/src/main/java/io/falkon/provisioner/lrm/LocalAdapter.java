package io.falkon.provisioner.lrm;

import io.falkon.provisioner.JobRequest;
import io.falkon.provisioner.JobState;
import io.falkon.provisioner.LrmAdapter;
import org.slf4j.LoggerFactory;

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
 * This machine as the "scheduler": an allocation of N nodes is N executors started here, by
 * default as processes. An optional start delay emulates a batch queue's allocation latency (which
 * cannot be produced on one machine otherwise): the job stays {@link JobState#QUEUED} that long
 * before its nodes start, {@link JobState#RUNNING} while any of them lives, then done.
 */
public final class LocalAdapter implements LrmAdapter, AutoCloseable {

    /** One started node: its executor, however it runs. */
    public interface Node {
        boolean alive();

        /** Asks the executor to leave (it kills its tasks). */
        void stop();
    }

    /** Starts node {@code index} of a job. */
    public interface Launcher {
        Node start(JobRequest request, String jobId, int index) throws IOException;
    }

    /** Each node an executor process running the job's node command; output in the work directory. */
    public static final Launcher PROCESSES = (r, id, i) -> {
        File log = r.workDir().resolve(id + "-" + i + ".out").toFile();
        Process p = new ProcessBuilder("sh", "-c", r.nodeCommand()).redirectErrorStream(true).redirectOutput(log)
                .redirectInput(new File("/dev/null")).start();
        return new Node() {
            @Override
            public boolean alive() {
                return p.isAlive();
            }

            @Override
            public void stop() {
                p.descendants().forEach(ProcessHandle::destroy);
                p.destroy(); // SIGTERM: the executor kills its tasks and leaves
            }
        };
    };

    private final Duration startDelay;
    private final Launcher launcher;
    private final ScheduledExecutorService starter = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "falkon-local-lrm");
        t.setDaemon(true);
        return t;
    });
    private final Map<String, Job> jobs = new ConcurrentHashMap<>();
    private final AtomicInteger ids = new AtomicInteger();

    private static final class Job {
        final List<Node> nodes = new ArrayList<>();
        boolean started;
        boolean cancelled;
    }

    public LocalAdapter(Duration startDelay) {
        this(startDelay, PROCESSES);
    }

    public LocalAdapter(Duration startDelay, Launcher launcher) {
        this.startDelay = startDelay;
        this.launcher = launcher;
    }

    /** How its nodes start. */
    public Launcher launcher() {
        return launcher;
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
                    job.nodes.add(launcher.start(r, id, i));
                } catch (IOException | RuntimeException e) {
                    // the node "failed": the job runs with fewer executors, as on a real cluster
                    LoggerFactory.getLogger(LocalAdapter.class).warn("{}: cannot start an executor: {}", id,
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
                if (!job.started && !job.cancelled) {
                    out.put(id, JobState.QUEUED);
                } else {
                    out.put(id, job.nodes.stream().anyMatch(Node::alive) ? JobState.RUNNING : JobState.DONE);
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
        List<Node> nodes;
        synchronized (job) {
            job.cancelled = true;
            nodes = new ArrayList<>(job.nodes);
        }
        nodes.forEach(Node::stop);
    }

    /** Cancels every job and stops. */
    @Override
    public void close() {
        jobs.keySet().forEach(this::cancel);
        starter.shutdownNow();
    }
}
