package io.falkon.executor.run;

import io.falkon.protocol.Execution;
import io.falkon.protocol.TaskSpec;

import java.io.File;

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

    /**
     * The flags of a launch failure with this errno: {@link Execution#PERMANENT} when no retry could
     * succeed (the program or the working directory does not exist, is not executable or is not a
     * directory), none when it might (out of processes, memory or descriptors).
     */
    static int launchFlags(int errno) {
        // ENOENT, EACCES, ENOTDIR, ENOEXEC
        return errno == 2 || errno == 13 || errno == 20 || errno == 8 ? Execution.PERMANENT : 0;
    }

    /**
     * The same for a task run in {@code dir}: when the task set no directory and the executor's own
     * ({@code --workdir}) is missing, the node is at fault (a missing scratch mount), not the task:
     * another executor may run it, so the failure is not permanent.
     */
    static int launchFlags(int errno, TaskSpec spec, File dir) {
        if (spec.workDir().isEmpty() && dir != null && !dir.isDirectory()) {
            return 0;
        }
        return launchFlags(errno);
    }

}
