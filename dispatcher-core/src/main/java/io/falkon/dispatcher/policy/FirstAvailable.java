package io.falkon.dispatcher.policy;

/**
 * First-available (FA): each task, oldest first, goes to the next executor with a free slot;
 * where the data is plays no part. Executors take turns one task at a time, so a round with fewer
 * tasks than free slots spreads them over all executors instead of filling the first one. A retried
 * task is not given back to an executor it failed on while another can take it: that executor
 * takes the next task instead (looking at most {@value #LOOKAHEAD} tasks past the head); so does an
 * executor that has too few free slots for a task of several cores.
 */
public final class FirstAvailable implements DispatchPolicy {
    public static final String NAME = "first-available";

    @Override
    public String name() {
        return NAME;
    }

    static final int LOOKAHEAD = 16;

    @Override
    public <T extends QueuedTask, E extends ExecutorView> void schedule(SchedulingRound<T, E> round) {
        int misses = 0;
        while (round.head() != null) {
            E executor = round.nextWithCredit();
            if (executor == null) {
                return;
            }
            T task = round.head();
            for (int looked = 0; task != null && !round.fits(task, executor) && looked < LOOKAHEAD; looked++) {
                task = round.next(task);
            }
            if (task == null || !round.fits(task, executor)) {
                // nothing near the head for this executor; stop once every executor has had its turn
                if (++misses > round.executors().size()) {
                    return;
                }
                continue;
            }
            misses = 0;
            round.assign(task, executor); // cannot be refused: the task fits
        }
    }
}
