package io.falkon.dispatcher.policy;

/**
 * Good-cache-compute (GCC): max-cache-hit while processor utilization (busy slots over registered
 * slots) is at or above a threshold, max-compute-util below it. The papers use 0.9: processors stay
 * busy, and the scheduler still has room to wait for a cache hit. Utilization here counts the slot
 * being filled ({@link SchedulingRound#utilizationWithOneMore()}): a decision happens when a slot
 * frees, so busy over total alone would never reach 0.9 on a cluster of fewer than 10 slots, and
 * GCC would never wait for a cache hit there.
 */
public final class GoodCacheCompute implements DispatchPolicy {
    public static final String NAME = "good-cache-compute";
    public static final double DEFAULT_THRESHOLD = 0.9;

    private final double threshold;

    public GoodCacheCompute() {
        this(DEFAULT_THRESHOLD);
    }

    public GoodCacheCompute(double threshold) {
        if (threshold <= 0 || threshold > 1) {
            throw new IllegalArgumentException("the GCC utilization threshold must be in (0, 1], got " + threshold);
        }
        this.threshold = threshold;
    }

    public double threshold() {
        return threshold;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean dataAware() {
        return true;
    }

    @Override
    public <T extends QueuedTask, E extends ExecutorView> void schedule(SchedulingRound<T, E> round) {
        int idle = 0;
        int skipped = 0;
        T t = round.head();
        while (t != null) {
            if (round.utilizationWithOneMore() < threshold) {
                // MCU: keep processors busy
                if (round.totalCredits() == 0) {
                    return;
                }
                T next = round.next(t);
                if (MaxComputeUtil.step(round, t)) {
                    skipped = 0;
                } else if (++skipped > MaxComputeUtil.LOOKAHEAD) {
                    return;
                }
                idle = 0;
                t = next;
            } else {
                // MCH: wait for the cache hit
                E e = round.nextWithCredit();
                if (e == null) {
                    return;
                }
                if (MaxCacheHit.step(round, e)) {
                    idle = 0;
                } else if (++idle > round.executors().size()) {
                    return;
                }
                t = round.head();
            }
        }
    }
}
