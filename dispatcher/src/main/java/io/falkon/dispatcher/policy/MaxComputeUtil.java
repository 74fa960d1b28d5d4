package io.falkon.dispatcher.policy;

/**
 * Max-compute-util (MCU): each task, oldest first, goes to a free executor, preferring the free
 * executor whose cache holds the most of its input bytes. Keeps every processor busy at the
 * possible cost of moving data.
 */
public final class MaxComputeUtil implements DispatchPolicy {
    public static final String NAME = "max-compute-util";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean dataAware() {
        return true;
    }

    @Override
    public void schedule(SchedulingRound round) {
        QueuedTask t;
        while ((t = round.head()) != null) {
            if (!step(round, t)) {
                return;
            }
        }
    }

    /** Runs {@code t} on the free executor caching most of it, else on the next free one; false if none is free. */
    static boolean step(SchedulingRound round, QueuedTask t) {
        ExecutorView e = round.bestWithCredit(t);
        if (e == null) {
            e = round.nextWithCredit();
            if (e == null) {
                return false;
            }
        }
        round.assign(t, e);
        return true;
    }
}
