package io.falkon.protocol;

/** How a task ended ({@code Execution.status}). */
public enum TaskStatus {
    /** The process ran and exited; the exit code says whether it succeeded. */
    EXITED(0),
    /** Killed after its wall-time limit. */
    TIMEOUT(1),
    /** The process could not be started. */
    LAUNCH_FAILED(2),
    /** The executor running it went away. */
    EXECUTOR_LOST(3),
    /** Its instance was destroyed before it finished. */
    CANCELLED(4),
    /** The executor refused it (shutting down, or over its capacity). */
    REJECTED(5),
    /** An input could not be fetched (data diffusion). */
    FETCH_FAILED(6),
    /**
     * The process exited 0 but a declared output could not be saved (not written, or the output
     * store refused it): not a success, and not retried (the task decides what it writes).
     */
    OUTPUT_FAILED(7),
    /**
     * Never run: a task it depends on (by data, or by {@code after}) did not succeed. Its detail and
     * its {@link ExtTags#DEPENDENCY} field name that task; not retried.
     */
    DEPENDENCY_FAILED(8);

    private static final TaskStatus[] BY_CODE = values();

    private final int code;

    TaskStatus(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /**
     * Failures of the node or the framework rather than of the task: the dispatcher retries these
     * on another attempt while the task's retry limit allows. A program that cannot start is
     * counted here because the cause is often the node (a missing mount, a full disk); an exit
     * code and a wall-time timeout are the application's and are delivered as they are.
     */
    public boolean retryable() {
        return this == EXECUTOR_LOST || this == REJECTED || this == FETCH_FAILED || this == LAUNCH_FAILED;
    }

    /** The status with this code, or {@code null} if undefined. */
    public static TaskStatus of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
