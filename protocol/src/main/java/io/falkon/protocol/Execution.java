package io.falkon.protocol;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * How one attempt at a task ended, as reported by the executor (or by the dispatcher for
 * {@link TaskStatus#EXECUTOR_LOST} and {@link TaskStatus#CANCELLED}).
 *
 * @param status         how it ended
 * @param exitCode       the process exit status for {@link TaskStatus#EXITED}, else -1
 * @param flags          {@link #STDOUT_TRUNCATED}, {@link #STDERR_TRUNCATED}, {@link #NO_EXEC}, {@link #PERMANENT}
 * @param startedMicros  executor clock, microseconds since the epoch (0 = unknown)
 * @param finishedMicros executor clock, microseconds since the epoch (0 = unknown)
 * @param stdout         the first bytes written to standard output (up to the executor's cap)
 * @param stderr         the first bytes written to standard error (up to the executor's cap)
 * @param detail         human-readable explanation, empty when there is nothing to add
 * @param ext            protocol extension fields, normally empty
 */
public record Execution(TaskStatus status, int exitCode, int flags, long startedMicros, long finishedMicros,
                        byte[] stdout, byte[] stderr, String detail, List<ExtField> ext) {

    public static final int STDOUT_TRUNCATED = 1;
    public static final int STDERR_TRUNCATED = 2;
    /** The executor ran in no-exec mode: nothing was executed (benchmarking only). */
    public static final int NO_EXEC = 4;
    /**
     * The failure would happen on any executor (an input missing from the store, a source outside
     * it): the dispatcher does not retry it, and it does not count against the executor.
     */
    public static final int PERMANENT = 8;

    private static final byte[] EMPTY = new byte[0];

    public Execution {
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(stdout, "stdout");
        Objects.requireNonNull(stderr, "stderr");
        Objects.requireNonNull(detail, "detail");
        Objects.requireNonNull(ext, "ext");
        if (flags < 0 || flags > 0xFF) {
            throw new IllegalArgumentException("flags out of range: " + flags);
        }
    }

    /** An outcome decided without running anything (lost executor, cancellation). */
    public static Execution of(TaskStatus status, String detail, long nowMicros) {
        return new Execution(status, -1, 0, 0, nowMicros, EMPTY, EMPTY, detail, ExtField.NONE);
    }

    /** The same, with flags (e.g. {@link #PERMANENT}). */
    public static Execution of(TaskStatus status, int flags, String detail, long nowMicros) {
        return new Execution(status, -1, flags, 0, nowMicros, EMPTY, EMPTY, detail, ExtField.NONE);
    }

    /** Did the task run and exit with status 0? */
    public boolean succeeded() {
        return status == TaskStatus.EXITED && exitCode == 0;
    }

    public boolean permanent() {
        return (flags & PERMANENT) != 0;
    }

    public boolean stdoutTruncated() {
        return (flags & STDOUT_TRUNCATED) != 0;
    }

    public boolean stderrTruncated() {
        return (flags & STDERR_TRUNCATED) != 0;
    }

    public boolean noExec() {
        return (flags & NO_EXEC) != 0;
    }

    /** Standard output decoded as UTF-8 (malformed bytes replaced). */
    public String stdoutText() {
        return new String(stdout, StandardCharsets.UTF_8);
    }

    /** Standard error decoded as UTF-8 (malformed bytes replaced). */
    public String stderrText() {
        return new String(stderr, StandardCharsets.UTF_8);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Execution e && e.status == status && e.exitCode == exitCode && e.flags == flags
                && e.startedMicros == startedMicros && e.finishedMicros == finishedMicros
                && Arrays.equals(e.stdout, stdout) && Arrays.equals(e.stderr, stderr)
                && e.detail.equals(detail) && e.ext.equals(ext);
    }

    @Override
    public int hashCode() {
        return Objects.hash(status, exitCode, flags, startedMicros, finishedMicros, detail);
    }

    @Override
    public String toString() {
        return "Execution[" + status + (status == TaskStatus.EXITED ? " " + exitCode : "")
                + ", stdout " + stdout.length + " B, stderr " + stderr.length + " B"
                + (detail.isEmpty() ? "" : ", " + detail) + "]";
    }
}
