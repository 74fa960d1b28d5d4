package io.falkon.executor.run;

import com.sun.jna.LastErrorException;
import com.sun.jna.Memory;
import com.sun.jna.StringArray;
import io.falkon.protocol.Execution;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskStatus;
import io.falkon.protocol.time.Clock;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The fast runner: posix_spawn from libc through JNA, the same system calls a C executor makes.
 * Compared with {@link ProcessBuilder} it avoids the JDK's per-spawn work (a failure pipe, a file
 * descriptor closed one by one in the child, a reaper thread per process): one close_range in the
 * child and a waitid on the slot's own thread.
 *
 * <p>Each task gets its own process group; a timeout or a cancel kills the whole group, and so
 * does the end of the task (stray background processes do not outlive it; a process that called
 * setsid has left the group and is not touched). Signal mask and dispositions are reset to the
 * defaults in the child.
 */
public final class PosixRunner implements TaskRunner {
    private static final byte[] EMPTY = new byte[0];

    private final Spool spool;
    private final long spoolLimit;
    private final String defaultWorkDir;
    private final ScheduledExecutorService watchdog;
    private final Memory actions = new Memory(LibC.FILE_ACTIONS_SIZE);
    private final Memory attr = new Memory(LibC.SPAWNATTR_SIZE);
    private final Memory signalsToDefault = new Memory(LibC.SIGSET_SIZE);
    private final Memory emptyMask = new Memory(LibC.SIGSET_SIZE);
    private final Memory siginfo = new Memory(LibC.SIGINFO_SIZE);
    private final int[] pidOut = new int[1];
    private final int[] statusOut = new int[1];
    private final Object lock = new Object();
    /** The running task's process (and group) id while it has not exited; guarded by lock. */
    private int pid;
    private long task = -1;
    private boolean cancelled;
    private boolean timedOut;
    private boolean overSpool;

    /** The tasks' environment, built once: most tasks add nothing to it. */
    private static final String[] BASE_ENV = TaskEnvironment.BASE.entrySet().stream()
            .map(e -> e.getKey() + "=" + e.getValue()).toArray(String[]::new);
    private static final StringArray BASE_ENVP = new StringArray(BASE_ENV);

    /** Whether this runner works here; if not, {@link #unavailableReason()} says why. */
    public static boolean available() {
        return LibC.unavailable() == null;
    }

    public static String unavailableReason() {
        Throwable t = LibC.unavailable();
        return t == null ? "" : t.toString();
    }

    /**
     * @param watchdog shared by the executor's slots: fires wall-time kills and spool checks
     */
    public PosixRunner(Path spoolDir, int slot, int outputCap, long spoolLimit, Path workDir,
                       ScheduledExecutorService watchdog) {
        if (!available()) {
            throw new IllegalStateException("posix_spawn runner unavailable: " + unavailableReason());
        }
        this.spool = new Spool(spoolDir, slot, outputCap);
        this.spoolLimit = spoolLimit;
        this.defaultWorkDir = workDir.toString();
        this.watchdog = watchdog;
        LibC.sigemptyset(emptyMask);
        LibC.sigfillset(signalsToDefault);
        LibC.sigdelset(signalsToDefault, LibC.SIGKILL);
        LibC.sigdelset(signalsToDefault, LibC.SIGSTOP);
    }

    @Override
    public Execution run(long taskId, TaskSpec spec) {
        List<String> argv = spec.argv();
        StringArray argvp = new StringArray(argv.toArray(new String[0]));
        StringArray envp = spec.env().isEmpty() ? BASE_ENVP : new StringArray(mergedEnv(spec.env()));
        String dir = spec.workDir().isEmpty() ? defaultWorkDir : spec.workDir();
        LibC.posix_spawn_file_actions_init(actions);
        LibC.posix_spawnattr_init(attr);
        int rc;
        long started = Clock.SYSTEM.nowMicros();
        try {
            LibC.posix_spawn_file_actions_addopen(actions, 0, "/dev/null", LibC.O_RDONLY, 0);
            LibC.posix_spawn_file_actions_addopen(actions, 1, spool.stdout.getPath(),
                    LibC.O_WRONLY | LibC.O_CREAT | LibC.O_TRUNC, 0644);
            LibC.posix_spawn_file_actions_addopen(actions, 2, spool.stderr.getPath(),
                    LibC.O_WRONLY | LibC.O_CREAT | LibC.O_TRUNC, 0644);
            LibC.posix_spawn_file_actions_addchdir_np(actions, dir);
            LibC.posix_spawn_file_actions_addclosefrom_np(actions, 3);
            LibC.posix_spawnattr_setflags(attr, (short) (LibC.POSIX_SPAWN_SETPGROUP | LibC.POSIX_SPAWN_SETSIGMASK
                    | LibC.POSIX_SPAWN_SETSIGDEF));
            LibC.posix_spawnattr_setpgroup(attr, 0);
            LibC.posix_spawnattr_setsigmask(attr, emptyMask);
            LibC.posix_spawnattr_setsigdefault(attr, signalsToDefault);
            synchronized (lock) {
                cancelled = false;
                timedOut = false;
                overSpool = false;
                task = taskId;
                String program = argv.get(0);
                rc = program.indexOf('/') >= 0
                        ? LibC.posix_spawn(pidOut, program, actions, attr, argvp, envp)
                        : LibC.posix_spawnp(pidOut, program, actions, attr, argvp, envp);
                pid = rc == 0 ? pidOut[0] : 0;
            }
        } finally {
            LibC.posix_spawn_file_actions_destroy(actions);
            LibC.posix_spawnattr_destroy(attr);
        }
        if (rc != 0) {
            synchronized (lock) {
                task = -1;
            }
            return new Execution(TaskStatus.LAUNCH_FAILED, -1, TaskRunner.launchFlags(rc, spec, new File(dir)), started,
                    Clock.SYSTEM.nowMicros(), EMPTY, EMPTY, launchFailure(spec, dir, rc), ExtField.NONE);
        }
        int child = pidOut[0];
        ScheduledFuture<?> deadline = spec.wallTimeMillis() > 0
                ? watchdog.schedule(() -> expire(child), spec.wallTimeMillis(), TimeUnit.MILLISECONDS) : null;
        awaitExit(child);
        boolean wasCancelled;
        boolean wasTimedOut;
        boolean wasOverSpool;
        synchronized (lock) {
            // the leader has exited but is not reaped, so its group id cannot be reused yet:
            // take down whatever it left running in its group, then let go of it
            killGroup(child);
            pid = 0;
            task = -1;
            wasCancelled = cancelled;
            wasTimedOut = timedOut;
            wasOverSpool = overSpool;
        }
        if (deadline != null) {
            deadline.cancel(false);
        }
        int status = reap(child);
        long finished = Clock.SYSTEM.nowMicros();
        TaskStatus outcome;
        int exitCode = -1;
        String detail = "";
        if (wasTimedOut) {
            outcome = TaskStatus.TIMEOUT;
            detail = JdkRunner.timeoutDetail(spec);
        } else if (wasCancelled) {
            outcome = TaskStatus.CANCELLED;
            detail = "cancelled";
        } else {
            outcome = TaskStatus.EXITED;
            int signal = status & 0x7f;
            if (signal == 0) {
                exitCode = (status >> 8) & 0xff;
            } else {
                exitCode = 128 + signal;
                detail = "killed by signal " + signal;
            }
            if (wasOverSpool) {
                detail = JdkRunner.spoolDetail(spoolLimit);
            }
        }
        return new Execution(outcome, exitCode, spool.flags(), started, finished, spool.stdoutBytes(),
                spool.stderrBytes(), detail, ExtField.NONE);
    }

    private static String[] mergedEnv(Map<String, String> extra) {
        List<String> env = new ArrayList<>(BASE_ENV.length + extra.size());
        for (String kv : BASE_ENV) {
            String name = kv.substring(0, kv.indexOf('='));
            if (!extra.containsKey(name)) {
                env.add(kv);
            }
        }
        extra.forEach((k, v) -> env.add(k + "=" + v));
        return env.toArray(new String[0]);
    }

    private static String launchFailure(TaskSpec spec, String dir, int errno) {
        String why = LibC.strerror(errno);
        if (!new File(dir).isDirectory()) {
            return "working directory " + dir + " does not exist: " + why;
        }
        return "cannot start " + spec.argv().get(0) + ": " + why;
    }

    /** Blocks until the child exits, leaving it unreaped (a zombie holds its pid and group id). */
    private void awaitExit(int child) {
        while (true) {
            try {
                LibC.waitid(LibC.P_PID, child, siginfo, LibC.WEXITED | LibC.WNOWAIT);
                return;
            } catch (LastErrorException e) {
                if (e.getErrorCode() != LibC.EINTR) {
                    throw new IllegalStateException("waitid(" + child + "): " + e.getMessage(), e);
                }
            }
        }
    }

    private int reap(int child) {
        while (true) {
            try {
                LibC.waitpid(child, statusOut, 0);
                return statusOut[0];
            } catch (LastErrorException e) {
                if (e.getErrorCode() != LibC.EINTR) {
                    throw new IllegalStateException("waitpid(" + child + "): " + e.getMessage(), e);
                }
            }
        }
    }

    /** Kills the task's process group; call with the lock held and the leader not yet reaped. */
    private static void killGroup(int leader) {
        try {
            LibC.kill(-leader, LibC.SIGKILL);
        } catch (LastErrorException e) {
            if (e.getErrorCode() != LibC.ESRCH) {
                throw new IllegalStateException("kill(-" + leader + "): " + e.getMessage(), e);
            }
        }
    }

    private void expire(int child) {
        synchronized (lock) {
            if (pid == child) {
                timedOut = true;
                killGroup(child);
            }
        }
    }

    /** Called by the watchdog every second: kills the task if its output outgrows the spool limit. */
    void checkSpool() {
        synchronized (lock) {
            if (pid != 0 && spool.size() > spoolLimit) {
                overSpool = true;
                killGroup(pid);
            }
        }
    }

    @Override
    public boolean cancel(long taskId) {
        synchronized (lock) {
            if (task != taskId) {
                return false;
            }
            cancelled = true;
            if (pid != 0) {
                killGroup(pid);
            }
            return true;
        }
    }

    @Override
    public void killCurrent() {
        synchronized (lock) {
            if (pid != 0) {
                cancelled = true;
                killGroup(pid);
            }
        }
    }
}
