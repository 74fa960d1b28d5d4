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

    /** How many queued tasks in a row MCU passes over that cannot go anywhere now (retries waiting for a node). */
    static final int LOOKAHEAD = 16;

    @Override
    public <T extends QueuedTask, E extends ExecutorView> void schedule(SchedulingRound<T, E> round) {
        T t = round.head();
        int skipped = 0;
        while (t != null && round.totalCredits() > 0) {
            T next = round.next(t); // before assigning: an assigned task leaves the queue
            if (step(round, t)) {
                skipped = 0;
            } else if (++skipped > LOOKAHEAD) {
                return;
            }
            t = next;
        }
    }

    /**
     * Runs {@code t} on the free executor caching most of it, else on the next free one that takes it;
     * false if none does (none is free, or only nodes the retried task failed on are).
     */
    static <T extends QueuedTask, E extends ExecutorView> boolean step(SchedulingRound<T, E> round, T t) {
        E best = round.bestWithCredit(t);
        if (best != null && round.assign(t, best)) {
            return true;
        }
        for (int i = 0, n = round.executors().size(); i < n; i++) {
            E e = round.nextWithCredit();
            if (e == null) {
                return false;
            }
            if (round.assign(t, e)) {
                return true;
            }
        }
        return false;
    }
}
