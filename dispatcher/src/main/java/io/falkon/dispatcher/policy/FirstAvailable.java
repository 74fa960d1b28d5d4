package io.falkon.dispatcher.policy;

/**
 * First-available (FA): each task, oldest first, goes to the next executor with a free slot;
 * where the data is plays no part. Executors take turns one task at a time, so a round with fewer
 * tasks than free slots spreads them over all executors instead of filling the first one.
 */
public final class FirstAvailable implements DispatchPolicy {
    public static final String NAME = "first-available";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void schedule(SchedulingRound round) {
        QueuedTask task;
        while ((task = round.head()) != null) {
            ExecutorView executor = round.nextWithCredit();
            if (executor == null) {
                return;
            }
            round.assign(task, executor);
        }
    }
}
