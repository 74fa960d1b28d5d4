package io.falkon.executor.run;

/**
 * When a persistent worker is replaced by a fresh one, to bound what it accumulates (leaked memory,
 * grown caches): after {@code maxTasks} tasks, or when its resident memory passes
 * {@code maxMemoryMiB} after a task. 0: no bound.
 */
public record WorkerLimits(int maxTasks, long maxMemoryMiB) {
    public static final WorkerLimits NONE = new WorkerLimits(0, 0);

    public WorkerLimits {
        if (maxTasks < 0 || maxMemoryMiB < 0) {
            throw new IllegalArgumentException("worker limits must not be negative");
        }
    }
}
