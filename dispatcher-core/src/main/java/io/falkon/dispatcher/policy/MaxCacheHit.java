package io.falkon.dispatcher.policy;

/**
 * Max-cache-hit (MCH): each task goes to the executor whose cache holds the most of its input bytes;
 * if that executor is busy, the task waits for it (other tasks in the window may go ahead). A task
 * whose inputs no executor caches goes to any free executor. Minimizes data movement; can leave
 * processors idle.
 */
public final class MaxCacheHit implements DispatchPolicy {
    public static final String NAME = "max-cache-hit";

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
        while (round.head() != null) {
            E e = round.nextWithCredit();
            if (e == null) {
                return;
            }
            if (!step(round, e)) {
                // nothing in the window is best run on e; stop once every executor with credit had its turn
                if (++idle > round.executors().size()) {
                    return;
                }
            } else {
                idle = 0;
            }
        }
    }

    /** Gives {@code e} the oldest window task it is best placed for; false if there is none. */
    static <T extends QueuedTask, E extends ExecutorView> boolean step(SchedulingRound<T, E> round, E e) {
        T t = round.bestFor(e);
        return t != null && round.assign(t, e);
    }
}
