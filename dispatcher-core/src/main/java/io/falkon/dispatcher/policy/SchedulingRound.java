package io.falkon.dispatcher.policy;

import java.util.Collection;

/**
 * What a {@link DispatchPolicy} sees and does in one scheduling round: the queue (from its head,
 * so a policy can look at a window of it), every registered executor, and {@link #assign}.
 *
 * <p>Typed by the scheduler's own task and executor types, which a policy never names: what the round
 * hands a policy is what it takes back, so neither side casts.
 *
 * @param <T> the scheduler's queued task
 * @param <E> the scheduler's executor
 */
public interface SchedulingRound<T extends QueuedTask, E extends ExecutorView> {

    /** The scheduler's clock, microseconds since the epoch. */
    long nowMicros();

    /** The oldest queued task, or {@code null} when the queue is empty. */
    T head();

    /** The task behind {@code task} in the queue, or {@code null} at the tail. */
    T next(T task);

    /** How many tasks are queued. */
    int queued();

    /** Every registered executor, in registration order. */
    Collection<E> executors();

    /**
     * The next executor with at least one credit, in round-robin order over those with credits,
     * or {@code null} when none has any. Executors that are taken but get no task stay in the ring.
     */
    E nextWithCredit();

    /** How many credits all executors together have left in this round. */
    int totalCredits();

    // ---- for data-aware policies (the scheduling window; the cache index) ----------------------

    /** How many tasks from the head of the queue a data-aware policy considers (the window). */
    int window();

    /**
     * Busy slots over registered slots, counting this round's assignments so far (a task of several
     * cores keeps several busy).
     */
    double utilization();

    /**
     * The utilization once one more task runs: what an assignment being decided would bring about.
     * (Decisions happen when a slot frees, so {@link #utilization()} itself never exceeds
     * (n-1)/n with n slots.)
     */
    double utilizationWithOneMore();

    /** Bytes of {@code task}'s inputs that {@code executor} caches, according to the index. */
    long cachedBytes(T task, E executor);

    /**
     * The oldest task in the window that max-cache-hit would run on {@code executor}: one whose
     * inputs {@code executor} caches more of than any other executor does, or one whose inputs no
     * executor caches, and that does not prefer another executor. {@code null} if the window holds none.
     */
    T bestFor(E executor);

    /**
     * Among executors with credits that {@code task} does not prefer to avoid, the one caching the
     * most of its inputs; null if none caches any.
     */
    E bestWithCredit(T task);

    /**
     * Whether {@code task} should not go to {@code executor} now: an earlier attempt failed there
     * and some other active executor has not failed it. A retry goes back to a node it failed on
     * only when there is nowhere else.
     */
    boolean prefersElsewhere(T task, E executor);

    /**
     * Whether {@link #assign}{@code (task, executor)} would succeed now: the executor has a credit
     * for each of the task's cores and the memory it asks, is not kept for another task that fits
     * nowhere yet (so a large task does not starve behind small ones), and the task does not
     * {@link #prefersElsewhere prefer another executor}.
     */
    boolean fits(T task, E executor);

    /**
     * Removes {@code task} from the queue and sends it to {@code executor} (in one bundle with the
     * executor's other assignments of this round), consuming a credit per core of the task. The
     * round refuses (returns false, changing nothing) when the task does not {@link #fits fit} there:
     * a retry avoids the nodes it failed on under every policy, and a task's resources and the
     * round's reservation hold whatever the policy.
     *
     * @return whether the task was assigned
     * @throws IllegalStateException if the task is not queued
     */
    boolean assign(T task, E executor);
}
