package io.falkon.executor.run;

import io.falkon.protocol.Execution;
import io.falkon.protocol.PersistentWorker;
import io.falkon.protocol.ProtocolException;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskStatus;
import io.falkon.protocol.WorkerFrames;
import io.falkon.protocol.time.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A slot's runner for tasks that name a {@link PersistentWorker}: it keeps one resident process of
 * the worker's command (started on the first such task, kept for every later task of the same
 * command and environment) and hands it each task as a {@link WorkerFrames.Request} on its standard
 * input, reading the {@link WorkerFrames.Response} from its standard output: no process per task.
 * Other tasks go to the slot's process runner.
 *
 * <p>The worker is killed and replaced when a task's wall time passes, when the task is cancelled,
 * when it breaks the framing, and after the {@link WorkerLimits}. A task ends successfully only with
 * its worker's answer: a worker that exits (whatever its status), is killed, or closes its output or
 * its input before answering fails the task ({@code LAUNCH_FAILED}, not retried) with a detail naming
 * which, and the next task starts a new one. Its standard error is the executor's.
 */
final class ResidentWorker implements TaskRunner {
    private static final Logger log = LoggerFactory.getLogger(ResidentWorker.class);
    private static final Pattern ERRNO = Pattern.compile("error=(\\d+)");

    private final TaskRunner processes;
    private final int outputCap;
    private final Path workDir;
    private final WorkerLimits limits;
    private final ScheduledExecutorService watchdog;

    /** The live worker; only the slot thread replaces it, other threads kill it under the lock. */
    private Live live;
    private final Object lock = new Object();
    private long running = -1;
    private boolean cancelled;
    private boolean timedOut;

    /** One worker process and what identifies the tasks it may serve. */
    private record Live(Process process, List<String> key, OutputStream in, DataInputStream out, int[] served) {
    }

    ResidentWorker(TaskRunner processes, int outputCap, Path workDir, WorkerLimits limits,
                   ScheduledExecutorService watchdog) {
        this.processes = processes;
        this.outputCap = outputCap;
        this.workDir = workDir == null ? Path.of("").toAbsolutePath() : workDir.toAbsolutePath();
        this.limits = limits;
        this.watchdog = watchdog;
    }

    @Override
    public Execution run(long taskId, TaskSpec spec) {
        PersistentWorker worker = spec.worker();
        if (worker == null) {
            return processes.run(taskId, spec);
        }
        long started = Clock.SYSTEM.nowMicros();
        List<String> key = key(worker, spec);
        if (live != null && (!live.key.equals(key) || !live.process.isAlive())) {
            stop("serves another command or environment");
        }
        if (live == null) {
            try {
                Live started1 = start(worker, spec, key);
                synchronized (lock) {
                    live = started1;
                }
            } catch (IOException e) {
                Matcher m = ERRNO.matcher(String.valueOf(e.getMessage()));
                int errno = m.find() ? Integer.parseInt(m.group(1)) : 0;
                return failed(TaskStatus.LAUNCH_FAILED, TaskRunner.launchFlags(errno),
                        "cannot start worker " + worker.command().get(0) + ": " + e.getMessage(), started);
            }
        }
        String dir = spec.workDir().isEmpty() ? workDir.toString() : spec.workDir();
        byte[] request = new WorkerFrames.Request(taskId, outputCap, spec.argv(), spec.env(), dir, worker.payload())
                .encode();
        synchronized (lock) {
            running = taskId;
            cancelled = false;
            timedOut = false;
        }
        ScheduledFuture<?> timer = spec.wallTimeMillis() > 0
                ? watchdog.schedule(() -> expire(taskId), spec.wallTimeMillis(), TimeUnit.MILLISECONDS) : null;
        WorkerFrames.Response response = null;
        String broken = null;
        String closed = null;
        Live w = live;
        try {
            w.in.write(request);
            w.in.flush();
            closed = "output";
            response = read(w.out, taskId);
        } catch (IOException e) {
            // no answer: its input refused the request (closed = null: "input"), or its output ended
        } catch (ProtocolException e) {
            broken = e.getMessage();
        } finally {
            if (timer != null) {
                timer.cancel(false);
            }
        }
        boolean wasCancelled;
        boolean wasTimedOut;
        synchronized (lock) {
            running = -1;
            wasCancelled = cancelled;
            wasTimedOut = timedOut;
        }
        if (wasTimedOut) {
            stop(null);
            return failed(TaskStatus.TIMEOUT, 0, "wall time " + spec.wallTimeMillis() + " ms exceeded; worker killed",
                    started);
        }
        if (wasCancelled) {
            stop(null);
            return failed(TaskStatus.CANCELLED, 0, "cancelled", started);
        }
        if (broken != null) {
            stop(null);
            return failed(TaskStatus.LAUNCH_FAILED, Execution.PERMANENT,
                    "worker " + worker.command().get(0) + " broke the framing (docs/protocol.md section 9): " + broken
                            + "; it was replaced", started);
        }
        if (response == null) {
            // no answer, so the task did not run: a worker that exits 0 without answering has not succeeded
            boolean alive = !exitsWithin(w.process, 1000);
            int status = reap();
            String what = alive
                    ? "closed its standard " + (closed == null ? "input" : closed) + " without answering task " + taskId
                    + "; it was killed"
                    : status > 128 ? "was killed by signal " + (status - 128) + " before answering task " + taskId
                    : "exited (exit status " + status + ") without answering task " + taskId;
            return failed(TaskStatus.LAUNCH_FAILED, Execution.PERMANENT, "worker " + worker.command().get(0) + " "
                    + what + "; a new one serves the next task", started);
        }
        live.served[0]++;
        retireIfSpent();
        int flags = (response.stdout().length > outputCap ? Execution.STDOUT_TRUNCATED : 0)
                | (response.stderr().length > outputCap ? Execution.STDERR_TRUNCATED : 0);
        return new Execution(TaskStatus.EXITED, response.exitCode(), flags, started, Clock.SYSTEM.nowMicros(),
                cap(response.stdout()), cap(response.stderr()), "", List.of());
    }

    private static Execution failed(TaskStatus status, int flags, String detail, long started) {
        return new Execution(status, -1, flags, started, Clock.SYSTEM.nowMicros(), new byte[0], new byte[0], detail,
                List.of());
    }

    private byte[] cap(byte[] b) {
        return b.length > outputCap ? Arrays.copyOf(b, outputCap) : b;
    }

    /** A worker serves tasks of one command and one environment (it was started with it). */
    private static List<String> key(PersistentWorker worker, TaskSpec spec) {
        List<String> key = new java.util.ArrayList<>(worker.command());
        key.add("\0");
        spec.env().forEach((k, v) -> key.add(k + "=" + v));
        return key;
    }

    private Live start(PersistentWorker worker, TaskSpec spec, List<String> key) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(worker.command()).directory(workDir.toFile())
                .redirectError(ProcessBuilder.Redirect.INHERIT);
        Map<String, String> env = pb.environment();
        env.putAll(spec.env());
        env.put("FALKON_WORKER", "1");
        Process p = pb.start();
        log.info("started worker {} (pid {})", worker.command(), p.pid());
        return new Live(p, key, new BufferedOutputStream(p.getOutputStream(), 65_536),
                new DataInputStream(p.getInputStream()), new int[1]);
    }

    private static WorkerFrames.Response read(DataInputStream in, long taskId) throws IOException {
        int length = in.readInt();
        if (length < 0 || length > WorkerFrames.MAX_FRAME) {
            throw new ProtocolException(io.falkon.protocol.ErrorCode.FRAME_TOO_LARGE,
                    "a response of " + Integer.toUnsignedLong(length) + " bytes (at most " + WorkerFrames.MAX_FRAME + ")");
        }
        byte[] body = new byte[length];
        in.readFully(body);
        WorkerFrames.Response r = WorkerFrames.Response.decode(body);
        if (r.taskId() != taskId) {
            throw new ProtocolException(io.falkon.protocol.ErrorCode.MALFORMED,
                    "answered task " + r.taskId() + " when asked for task " + taskId);
        }
        return r;
    }

    private void retireIfSpent() {
        if (limits.maxTasks() > 0 && live.served[0] >= limits.maxTasks()) {
            stop("served " + live.served[0] + " tasks");
        } else if (limits.maxMemoryMiB() > 0) {
            long rss = residentMiB(live.process.pid());
            if (rss > limits.maxMemoryMiB()) {
                stop("holds " + rss + " MiB resident, over " + limits.maxMemoryMiB());
            }
        }
    }

    /** The process's resident set (VmRSS), in MiB; 0 where /proc does not say. */
    static long residentMiB(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024;
                }
            }
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
        return 0;
    }

    /** Waits for the dead (or dying) worker and forgets it; its exit status. */
    private int reap() {
        Process p = live.process;
        synchronized (lock) {
            live = null;
        }
        kill(p);
        try {
            return p.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /**
     * Whether the process ends within {@code millis}: a worker that exits closes its output as it goes,
     * so a little grace tells that from one that closed its output and lives on.
     */
    private static boolean exitsWithin(Process p, long millis) {
        try {
            return p.waitFor(millis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return !p.isAlive();
        }
    }

    /** Ends the live worker (why, for the log; null: its task already says). */
    private void stop(String why) {
        if (live == null) {
            return;
        }
        if (why != null) {
            log.info("replacing worker {} (pid {}): it {}", live.key.subList(0, live.key.indexOf("\0")),
                    live.process.pid(), why);
        }
        try {
            live.in.close(); // end of input: a well-behaved worker exits
        } catch (IOException ignored) {
            // it is killed below anyway
        }
        reap();
    }

    private static void kill(Process p) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
    }

    private void expire(long taskId) {
        synchronized (lock) {
            if (running == taskId && live != null) {
                timedOut = true;
                kill(live.process);
            }
        }
    }

    @Override
    public boolean cancel(long taskId) {
        synchronized (lock) {
            if (running == taskId && live != null) {
                cancelled = true;
                kill(live.process);
                return true;
            }
        }
        return processes.cancel(taskId);
    }

    @Override
    public void killCurrent() {
        synchronized (lock) {
            if (running >= 0 && live != null) {
                cancelled = true;
                kill(live.process);
            }
        }
        processes.killCurrent();
    }

    /** Ends the worker at executor shutdown. */
    void close() {
        synchronized (lock) {
            if (live != null) {
                kill(live.process);
            }
        }
    }
}
