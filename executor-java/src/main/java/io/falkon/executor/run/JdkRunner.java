package io.falkon.executor.run;

import io.falkon.protocol.Execution;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskStatus;
import io.falkon.protocol.time.Clock;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The portable runner: {@link ProcessBuilder}. Used where {@link PosixRunner} is unavailable
 * (not Linux/glibc, or JNA cannot load). It kills a task's tree by walking its descendants, so
 * a process that left the tree (daemonized) survives a timeout; the posix runner kills the whole
 * process group instead.
 */
public final class JdkRunner implements TaskRunner {
    /** How ProcessBuilder reports the errno of a failed start: "error=2, No such file or directory". */
    private static final Pattern ERRNO = Pattern.compile("error=(\\d+)");
    private static final File DEV_NULL = new File("/dev/null");
    private static final byte[] EMPTY = new byte[0];
    /** How often a waiting slot checks the spool size and cancellation. */
    private static final long POLL_MILLIS = 1000;

    private final Spool spool;
    private final long spoolLimit;
    private final File defaultWorkDir;
    private volatile Process current;
    private volatile long currentTask = -1;
    private volatile boolean cancelled;

    public JdkRunner(Path spoolDir, int slot, int outputCap, long spoolLimit, Path workDir) {
        this.spool = new Spool(spoolDir, slot, outputCap);
        this.spoolLimit = spoolLimit;
        this.defaultWorkDir = workDir.toFile();
    }

    @Override
    public Execution run(long taskId, TaskSpec spec) {
        ProcessBuilder pb = new ProcessBuilder(spec.argv());
        TaskEnvironment.removeExecutorsOwn(pb.environment());
        if (!spec.env().isEmpty()) {
            pb.environment().putAll(spec.env());
        }
        pb.directory(spec.workDir().isEmpty() ? defaultWorkDir : new File(spec.workDir()));
        pb.redirectInput(DEV_NULL);
        pb.redirectOutput(spool.stdout);
        pb.redirectError(spool.stderr);
        cancelled = false;
        currentTask = taskId;
        long started = Clock.SYSTEM.nowMicros();
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            currentTask = -1;
            String why = e.getMessage() == null ? e.toString() : e.getMessage();
            Matcher errno = ERRNO.matcher(why);
            return new Execution(TaskStatus.LAUNCH_FAILED, -1,
                    errno.find() ? TaskRunner.launchFlags(Integer.parseInt(errno.group(1)), spec, pb.directory()) : 0, started,
                    Clock.SYSTEM.nowMicros(), EMPTY, EMPTY, launchFailure(spec, why), ExtField.NONE);
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
                    detail = timeoutDetail(spec);
                    break;
                }
                if (p.waitFor(Math.min(left, TimeUnit.MILLISECONDS.toNanos(POLL_MILLIS)), TimeUnit.NANOSECONDS)) {
                    break;
                }
                if (cancelled) {
                    killTree(p);
                    break;
                }
                if (spool.size() > spoolLimit) {
                    killTree(p);
                    detail = spoolDetail(spoolLimit);
                    break;
                }
            }
            exit = p.waitFor();
        } catch (InterruptedException e) {
            killTree(p);
            Thread.currentThread().interrupt();
            cancelled = true;
            exit = -1;
        } finally {
            current = null;
            currentTask = -1;
        }
        if (cancelled && status == TaskStatus.EXITED && detail.isEmpty()) {
            status = TaskStatus.CANCELLED;
            detail = "cancelled";
        }
        return new Execution(status, status == TaskStatus.EXITED ? exit : -1, spool.flags(), started,
                Clock.SYSTEM.nowMicros(), spool.stdoutBytes(), spool.stderrBytes(), detail, ExtField.NONE);
    }

    static String timeoutDetail(TaskSpec spec) {
        return "wall time " + spec.wallTimeMillis() + " ms exceeded; process tree killed";
    }

    static String spoolDetail(long limit) {
        return "output exceeded the executor's spool limit of " + limit + " bytes; killed";
    }

    static String launchFailure(TaskSpec spec, String why) {
        if (!spec.workDir().isEmpty() && !new File(spec.workDir()).isDirectory()) {
            return "working directory " + spec.workDir() + " does not exist: " + why;
        }
        return "cannot start " + spec.argv().get(0) + ": " + why;
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

    @Override
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

    @Override
    public void killCurrent() {
        Process p = current;
        if (p != null) {
            cancelled = true;
            killTree(p);
        }
    }
}
