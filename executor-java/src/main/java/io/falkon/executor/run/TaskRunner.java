package io.falkon.executor.run;

import io.falkon.protocol.Execution;
import io.falkon.protocol.TaskSpec;

import java.time.Instant;

/**
 * Runs one task at a time as an OS process, for one slot: starts it, enforces its wall-time limit
 * by killing its whole process tree, captures bounded output, and describes how it ended.
 * Implementations: {@link PosixRunner} (posix_spawn through JNA, the fast path) and
 * {@link JdkRunner} (java.lang.ProcessBuilder, the portable fallback); both pass
 * {@code TaskRunnerContract}.
 */
public interface TaskRunner {

    /** Runs the task to completion, timeout or cancellation. Called by one thread at a time. */
    Execution run(long taskId, TaskSpec spec);

    /** If this runner is running {@code taskId}, kills it and reports it cancelled; returns whether it was. */
    boolean cancel(long taskId);

    /** Kills whatever runs now (executor shutdown). */
    void killCurrent();

    static long nowMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1000;
    }
}
