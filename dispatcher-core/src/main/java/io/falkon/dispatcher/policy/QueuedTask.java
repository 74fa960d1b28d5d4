package io.falkon.dispatcher.policy;

/** A task waiting in the dispatcher's queue, as a policy sees it. */
public interface QueuedTask {

    /** The dispatcher's id for the task. */
    long id();


    /** When the dispatcher accepted the task, microseconds since the epoch. */
    long submittedMicros();

    /** How many times the task has been dispatched before (0 on its first dispatch). */
    int attempt();

    /**
     * Whether an earlier attempt of this task failed on {@code executor} (a lost connection, a
     * rejection, a failed launch...): a retry should go elsewhere when it can.
     */
    boolean avoids(ExecutorView executor);

    /** Whether it reads input objects (data diffusion). */
    boolean hasInputs();
}
