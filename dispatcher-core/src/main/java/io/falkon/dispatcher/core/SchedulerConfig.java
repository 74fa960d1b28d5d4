package io.falkon.dispatcher.core;

/**
 * The scheduler's reliability and memory knobs (docs/reliability.md lists them with their defaults).
 *
 * @param defaultRetries        re-dispatches allowed after framework failures, for tasks that set none
 * @param dispatchTimeoutMillis a dispatched task without a result after this long is presumed lost and
 *                              re-dispatched (0: only tasks with a wall-time limit get one, of
 *                              wall time + {@code dispatchGraceMillis})
 * @param dispatchGraceMillis   slack added to a task's wall time to make its dispatch timeout
 * @param suspendAfterFailures  failures within the window that suspend an executor (0: never suspend)
 * @param suspendWindowMillis   the window
 * @param suspendForMillis      how long a suspended executor gets no work
 * @param suspendFailureRate    the share of an executor's outcomes in the window that must be failures
 * @param memoryBudgetBytes     queued tasks above this pause reading from clients (retained results are not counted)
 * @param windowSize            tasks a data-aware policy looks at from the head of the queue (0: 100 per
 *                              executor, the papers' choice)
 * @param multicast             copy an object most queued tasks read to every executor along a tree
 *                              (data-aware policies; {@link Multicast})
 * @param shares                the share of the executors an instance of each name gets against the others
 *                              (fair share, {@link TaskQueue}); 1 for a name not listed
 */
public record SchedulerConfig(int defaultRetries, long dispatchTimeoutMillis, long dispatchGraceMillis,
                              int suspendAfterFailures, long suspendWindowMillis, long suspendForMillis,
                              double suspendFailureRate, long memoryBudgetBytes, int windowSize,
                              boolean multicast, java.util.Map<String, Double> shares) {

    public SchedulerConfig {
        shares = java.util.Map.copyOf(shares);
        shares.forEach((name, share) -> {
            if (!(share > 0) || share.isInfinite()) {
                throw new IllegalArgumentException("the share of '" + name + "' must be a positive number, got " + share);
            }
        });
        if (defaultRetries < 0 || defaultRetries > 255) {
            throw new IllegalArgumentException("retries must be 0..255");
        }
        if (dispatchTimeoutMillis < 0 || dispatchGraceMillis < 0 || suspendWindowMillis < 0 || suspendForMillis < 0) {
            throw new IllegalArgumentException("times must not be negative");
        }
        if (suspendFailureRate <= 0 || suspendFailureRate > 1) {
            throw new IllegalArgumentException("suspendFailureRate must be in (0, 1]");
        }
        if (windowSize < 0) {
            throw new IllegalArgumentException("windowSize must not be negative");
        }
        if (memoryBudgetBytes < 1 << 20) {
            throw new IllegalArgumentException("memoryBudgetBytes must be at least 1 MiB");
        }
    }

    /**
     * 3 retries; dispatch timeout = wall time + 60 s for tasks with a wall time; suspend an executor
     * whose last 5 outcomes within 60 s were all failures (while others succeed) for 120 s; memory
     * budget half the heap.
     */
    public static SchedulerConfig defaults() {
        return new SchedulerConfig(3, 0, 60_000, 5, 60_000, 120_000, 1.0, Runtime.getRuntime().maxMemory() / 2, 0,
                true, java.util.Map.of());
    }

    public SchedulerConfig withDefaultRetries(int n) {
        return new SchedulerConfig(n, dispatchTimeoutMillis, dispatchGraceMillis, suspendAfterFailures,
                suspendWindowMillis, suspendForMillis, suspendFailureRate, memoryBudgetBytes, windowSize, multicast, shares);
    }

    public SchedulerConfig withDispatchTimeoutMillis(long ms) {
        return new SchedulerConfig(defaultRetries, ms, dispatchGraceMillis, suspendAfterFailures, suspendWindowMillis,
                suspendForMillis, suspendFailureRate, memoryBudgetBytes, windowSize, multicast, shares);
    }

    public SchedulerConfig withSuspension(int afterFailures, long windowMillis, long forMillis) {
        return new SchedulerConfig(defaultRetries, dispatchTimeoutMillis, dispatchGraceMillis, afterFailures,
                windowMillis, forMillis, suspendFailureRate, memoryBudgetBytes, windowSize, multicast, shares);
    }

    public SchedulerConfig withSuspendFailureRate(double rate) {
        return new SchedulerConfig(defaultRetries, dispatchTimeoutMillis, dispatchGraceMillis, suspendAfterFailures,
                suspendWindowMillis, suspendForMillis, rate, memoryBudgetBytes, windowSize, multicast, shares);
    }

    public SchedulerConfig withWindowSize(int tasks) {
        return new SchedulerConfig(defaultRetries, dispatchTimeoutMillis, dispatchGraceMillis, suspendAfterFailures,
                suspendWindowMillis, suspendForMillis, suspendFailureRate, memoryBudgetBytes, tasks, multicast, shares);
    }

    public SchedulerConfig withMemoryBudgetBytes(long bytes) {
        return new SchedulerConfig(defaultRetries, dispatchTimeoutMillis, dispatchGraceMillis, suspendAfterFailures,
                suspendWindowMillis, suspendForMillis, suspendFailureRate, bytes, windowSize, multicast, shares);
    }

    /** The share of an instance named {@code name}: its entry, else 1. */
    public double shareOf(String name) {
        return shares.getOrDefault(name, 1.0);
    }

    public SchedulerConfig withShares(java.util.Map<String, Double> byName) {
        return new SchedulerConfig(defaultRetries, dispatchTimeoutMillis, dispatchGraceMillis, suspendAfterFailures,
                suspendWindowMillis, suspendForMillis, suspendFailureRate, memoryBudgetBytes, windowSize, multicast,
                byName);
    }

    public SchedulerConfig withMulticast(boolean on) {
        return new SchedulerConfig(defaultRetries, dispatchTimeoutMillis, dispatchGraceMillis, suspendAfterFailures,
                suspendWindowMillis, suspendForMillis, suspendFailureRate, memoryBudgetBytes, windowSize, on, shares);
    }
}
