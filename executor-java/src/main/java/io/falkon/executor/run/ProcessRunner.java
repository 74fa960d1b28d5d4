package io.falkon.executor.run;

import io.falkon.protocol.Execution;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskStatus;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs one task at a time as an OS process, for one slot. Standard output and error go to this
 * slot's two spool files (reused for every task), and the first {@code outputCap} bytes of each
 * are read back after the process exits. Files instead of pipes mean no reader threads and no
 * read that blocks forever when a stray grandchild keeps a pipe open.
 */
public final class ProcessRunner {
    private static final File DEV_NULL = new File("/dev/null");
    private static final byte[] EMPTY = new byte[0];
    /** How often a waiting slot checks the spool size; also the granularity of cancellation. */
    private static final long POLL_MILLIS = 1000;

    private final File stdoutFile;
    private final File stderrFile;
    private final int outputCap;
    private final long spoolLimit;
    private final File defaultWorkDir;
    private volatile Process current;
    private volatile long currentTask = -1;
    private volatile boolean cancelled;

    /**
     * @param spoolDir   where this slot keeps its two output files
     * @param slot       the slot number (names the files)
     * @param outputCap  bytes of each stream returned with the result
     * @param spoolLimit a task whose output files grow beyond this is killed (protects the disk)
     * @param workDir    the working directory of tasks that do not name one
     */
    public ProcessRunner(Path spoolDir, int slot, int outputCap, long spoolLimit, Path workDir) {
        this.stdoutFile = spoolDir.resolve("slot-" + slot + ".out").toFile();
        this.stderrFile = spoolDir.resolve("slot-" + slot + ".err").toFile();
        this.outputCap = outputCap;
        this.spoolLimit = spoolLimit;
        this.defaultWorkDir = workDir.toFile();
    }

    static long nowMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1000;
    }

    /** Runs the task to completion (or timeout, or cancellation) and describes how it ended. */
    public Execution run(long taskId, TaskSpec spec) {
        ProcessBuilder pb = new ProcessBuilder(spec.argv());
        if (!spec.env().isEmpty()) {
            pb.environment().putAll(spec.env());
        }
        pb.directory(spec.workDir().isEmpty() ? defaultWorkDir : new File(spec.workDir()));
        pb.redirectInput(DEV_NULL);
        pb.redirectOutput(stdoutFile);
        pb.redirectError(stderrFile);
        cancelled = false;
        currentTask = taskId;
        long started = nowMicros();
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            currentTask = -1;
            return new Execution(TaskStatus.LAUNCH_FAILED, -1, 0, started, nowMicros(), EMPTY, EMPTY,
                    launchFailure(spec, e), ExtField.NONE);
        }
        current = p;
        String detail = "";
        TaskStatus status = TaskStatus.EXITED;
        int exit;
        try {
            long deadline = spec.wallTimeMillis() > 0
                    ? System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(spec.wallTimeMillis()) : Long.MAX_VALUE;
            while (true) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    killTree(p);
                    status = TaskStatus.TIMEOUT;
                    detail = "wall time " + spec.wallTimeMillis() + " ms exceeded; process tree killed";
                    break;
                }
                if (p.waitFor(Math.min(left, TimeUnit.MILLISECONDS.toNanos(POLL_MILLIS)), TimeUnit.NANOSECONDS)) {
                    break;
                }
                if (cancelled) {
                    killTree(p);
                    status = TaskStatus.CANCELLED;
                    detail = "cancelled by the dispatcher";
                    break;
                }
                if (stdoutFile.length() + stderrFile.length() > spoolLimit) {
                    killTree(p);
                    status = TaskStatus.EXITED;
                    detail = "output exceeded the executor's spool limit of " + spoolLimit + " bytes; killed";
                    break;
                }
            }
            exit = p.waitFor();
        } catch (InterruptedException e) {
            killTree(p);
            Thread.currentThread().interrupt();
            status = TaskStatus.CANCELLED;
            detail = "executor shutting down";
            exit = -1;
        } finally {
            current = null;
            currentTask = -1;
        }
        if (cancelled && status == TaskStatus.EXITED && detail.isEmpty()) {
            status = TaskStatus.CANCELLED;
            detail = "cancelled by the dispatcher";
        }
        long finished = nowMicros();
        int flags = 0;
        byte[] out = readCapped(stdoutFile);
        if (stdoutFile.length() > outputCap) {
            flags |= Execution.STDOUT_TRUNCATED;
        }
        byte[] err = readCapped(stderrFile);
        if (stderrFile.length() > outputCap) {
            flags |= Execution.STDERR_TRUNCATED;
        }
        return new Execution(status, status == TaskStatus.EXITED ? exit : -1, flags, started, finished, out, err,
                detail, ExtField.NONE);
    }

    private static String launchFailure(TaskSpec spec, IOException e) {
        String msg = e.getMessage() == null ? e.toString() : e.getMessage();
        if (!spec.workDir().isEmpty() && !new File(spec.workDir()).isDirectory()) {
            return "working directory " + spec.workDir() + " does not exist: " + msg;
        }
        return "cannot start " + spec.argv().get(0) + ": " + msg;
    }

    private byte[] readCapped(File f) {
        long len = f.length();
        if (len == 0) {
            return EMPTY;
        }
        try (InputStream in = Files.newInputStream(f.toPath())) {
            return in.readNBytes((int) Math.min(len, outputCap));
        } catch (IOException e) {
            return ("<output unreadable: " + e.getMessage() + ">").getBytes();
        }
    }

    /** Kills the process and everything it started (snapshot the descendants first: they get reparented). */
    static void killTree(Process p) {
        for (int round = 0; round < 2; round++) {
            List<ProcessHandle> descendants = p.descendants().toList();
            p.destroyForcibly();
            for (ProcessHandle h : descendants) {
                h.destroyForcibly();
            }
        }
    }

    /** If this slot runs {@code taskId}, kills it and marks it cancelled; returns whether it did. */
    public boolean cancel(long taskId) {
        if (currentTask != taskId) {
            return false;
        }
        cancelled = true;
        Process p = current;
        if (p != null && currentTask == taskId) {
            killTree(p);
        }
        return true;
    }

    /** Kills whatever this slot is running (executor shutdown). */
    public void killCurrent() {
        Process p = current;
        if (p != null) {
            cancelled = true;
            killTree(p);
        }
    }
}
