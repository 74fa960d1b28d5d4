package io.falkon.executor;

import io.falkon.executor.run.SlotPool;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * How to run an {@link Executor}.
 *
 * @param dispatcherHost where the dispatcher listens
 * @param dispatcherPort its port
 * @param executorId     unique name among the dispatcher's executors
 * @param slots          tasks run at once
 * @param noExec         complete tasks without running them: measures dispatch overhead only
 * @param outputCap      bytes of stdout and of stderr returned per task (the rest is dropped and the
 *                       result marked truncated)
 * @param spoolLimit     a task whose combined output exceeds this many bytes is killed
 * @param workDir        working directory of tasks that do not set one
 * @param token          the dispatcher's shared secret, empty for none
 * @param connectTimeout how long to wait for the dispatcher
 * @param runner         how to start processes: posix_spawn (fast, Linux/glibc) or the JDK's ProcessBuilder
 * @param prefetch       tasks to hold beyond the free slots (0, the default, is the papers' behaviour: the
 *                       dispatcher only sends a task when a slot is free). With prefetch the executor asks for
 *                       {@code slots + prefetch} tasks, a finished slot starts the next one at once, and results
 *                       travel back in batches: higher throughput for short tasks, less freedom for the
 *                       dispatcher to choose where a task runs
 * @param reconnectFor   after losing the dispatcher, keep dialling with back-off this long, then stop
 *                       ({@link Duration#ZERO}: stop at once)
 */
public record ExecutorConfig(String dispatcherHost, int dispatcherPort, String executorId, int slots, boolean noExec,
                             int outputCap, long spoolLimit, Path workDir, String token, Duration connectTimeout,
                             SlotPool.Runner runner, int prefetch, Duration reconnectFor) {

    public static final int DEFAULT_OUTPUT_CAP = 64 * 1024;
    public static final long DEFAULT_SPOOL_LIMIT = 1L << 30;

    public ExecutorConfig {
        Objects.requireNonNull(dispatcherHost, "dispatcherHost");
        Objects.requireNonNull(executorId, "executorId");
        Objects.requireNonNull(workDir, "workDir");
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(runner, "runner");
        Objects.requireNonNull(reconnectFor, "reconnectFor");
        if (prefetch < 0) {
            throw new IllegalArgumentException("prefetch must not be negative");
        }
        if (slots < 1) {
            throw new IllegalArgumentException("slots must be at least 1, got " + slots);
        }
        if (outputCap < 0) {
            throw new IllegalArgumentException("outputCap must not be negative");
        }
        if (executorId.isEmpty()) {
            throw new IllegalArgumentException("executorId must not be empty");
        }
    }

    /** One slot per core, 64 KiB output cap, the current directory, a generated id. */
    public static ExecutorConfig of(String host, int port) {
        return new ExecutorConfig(host, port, Executor.defaultId(), Runtime.getRuntime().availableProcessors(), false,
                DEFAULT_OUTPUT_CAP, DEFAULT_SPOOL_LIMIT, Path.of("").toAbsolutePath(), "", Duration.ofSeconds(10),
                SlotPool.Runner.AUTO, 0, Duration.ofMinutes(10));
    }

    public ExecutorConfig withId(String id) {
        return new ExecutorConfig(dispatcherHost, dispatcherPort, id, slots, noExec, outputCap, spoolLimit, workDir,
                token, connectTimeout, runner, prefetch, reconnectFor);
    }

    public ExecutorConfig withSlots(int n) {
        return new ExecutorConfig(dispatcherHost, dispatcherPort, executorId, n, noExec, outputCap, spoolLimit,
                workDir,
                token, connectTimeout, runner, prefetch, reconnectFor);
    }

    public ExecutorConfig withNoExec(boolean b) {
        return new ExecutorConfig(dispatcherHost, dispatcherPort, executorId, slots, b, outputCap, spoolLimit,
                workDir,
                token, connectTimeout, runner, prefetch, reconnectFor);
    }

    public ExecutorConfig withOutputCap(int bytes) {
        return new ExecutorConfig(dispatcherHost, dispatcherPort, executorId, slots, noExec, bytes, spoolLimit,
                workDir,
                token, connectTimeout, runner, prefetch, reconnectFor);
    }

    public ExecutorConfig withWorkDir(Path dir) {
        return new ExecutorConfig(dispatcherHost, dispatcherPort, executorId, slots, noExec, outputCap, spoolLimit,
                dir, token, connectTimeout, runner, prefetch, reconnectFor);
    }

    public ExecutorConfig withRunner(SlotPool.Runner r) {
        return new ExecutorConfig(dispatcherHost, dispatcherPort, executorId, slots, noExec, outputCap, spoolLimit,
                workDir, token, connectTimeout, r, prefetch, reconnectFor);
    }

    public ExecutorConfig withPrefetch(int n) {
        return new ExecutorConfig(dispatcherHost, dispatcherPort, executorId, slots, noExec, outputCap, spoolLimit,
                workDir, token, connectTimeout, runner, n, reconnectFor);
    }

    public ExecutorConfig withReconnectFor(Duration d) {
        return new ExecutorConfig(dispatcherHost, dispatcherPort, executorId, slots, noExec, outputCap, spoolLimit,
                workDir, token, connectTimeout, runner, prefetch, d);
    }

    public ExecutorConfig withToken(String t) {
        return new ExecutorConfig(dispatcherHost, dispatcherPort, executorId, slots, noExec, outputCap, spoolLimit,
                workDir, t, connectTimeout, runner, prefetch, reconnectFor);
    }
}
