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
    CANCELLED(4);

    private static final TaskStatus[] BY_CODE = values();

    private final int code;

    TaskStatus(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The status with this code, or {@code null} if undefined. */
    public static TaskStatus of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
