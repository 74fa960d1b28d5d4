package io.falkon.dispatcher.policy;

/**
 * Decides which queued task goes to which executor. The scheduler calls {@link #schedule} on its
 * own thread once per scheduling round, whenever tasks are queued and some executor has free
 * credits; the policy assigns tasks through the round and must not keep references to it.
 * Implementations are plug-ins: each one passes the shared {@code DispatchPolicyContract} test.
 */
public interface DispatchPolicy {

    /** The policy's name as given on the command line, e.g. {@code first-available}. */
    String name();

    /** Assigns zero or more queued tasks to executors with credits. */
    <T extends QueuedTask, E extends ExecutorView> void schedule(SchedulingRound<T, E> round);

    /**
     * Whether the policy uses data location. A data-aware policy gets the scheduling window and the
     * cache index, and its tasks carry location hints to executors; a policy that is not sends
     * tasks without hints and tells executors to read inputs from the shared store (no data
     * diffusion).
     */
    default boolean dataAware() {
        return false;
    }
}
