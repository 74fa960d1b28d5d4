package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.SchedulingRound;

import java.util.Collection;

/**
 * A scheduling round as the policy sees it: the queue and its window, the executors with their
 * credits, the cache index. {@link #assign} is the only way a policy acts, and it enforces what every
 * policy must respect: an executor's credits, a retried task's wish to avoid the executors it failed
 * on while another can take it, what a sized task needs (a credit per core, its memory), and the
 * executor kept for the first queued task that fits nowhere yet.
 *
 * <p>That keeping is what stops a large task from starving behind small ones: when the queue's head
 * needs more than any executor has free, the executor that could hold it and has the most credits is
 * {@linkplain #reserved reserved}: it takes no other task until the head fits there. Other executors
 * go on with the tasks behind. A round with no sized task at its head reserves nothing and costs nothing.
 */
final class Round implements SchedulingRound<Task, ExecutorState> {
    private final Scheduler scheduler;
    private final TaskLedger ledger;
    private final ExecutorPool pool;
    /** The executor kept for {@link #reservedFor} this round, or null. */
    private ExecutorState reserved;
    private Task reservedFor;

    Round(Scheduler scheduler, TaskLedger ledger, ExecutorPool pool) {
        this.scheduler = scheduler;
        this.ledger = ledger;
        this.pool = pool;
    }

    /** Starts a round: keeps an executor for the head if it is a sized task that fits nowhere now. */
    void begin() {
        reserved = null;
        reservedFor = null;
        Task head = ledger.head();
        if (head == null || !head.sized()) {
            return;
        }
        for (ExecutorState e : pool.all()) {
            if (e.eligible() && e.fitsNow(head) && !prefersElsewhere(head, e)) {
                return;
            }
        }
        reserved = pool.reserveFor(head);
        reservedFor = reserved == null ? null : head;
    }

    /** The executor kept for the queue's head this round, or null. */
    ExecutorState reserved() {
        return reserved;
    }

    @Override
    public long nowMicros() {
        return scheduler.nowMicros();
    }

    @Override
    public Task head() {
        return ledger.head();
    }

    @Override
    public Task next(Task task) {
        return task.next;
    }

    @Override
    public int queued() {
        return ledger.queued();
    }

    @Override
    public Collection<ExecutorState> executors() {
        return pool.all();
    }

    @Override
    public ExecutorState nextWithCredit() {
        return pool.nextWithCredit();
    }

    @Override
    public int totalCredits() {
        return pool.totalCredits();
    }

    @Override
    public boolean prefersElsewhere(Task t, ExecutorState executor) {
        return t.avoids(executor) && pool.someoneElseFor(t);
    }

    @Override
    public boolean fits(Task t, ExecutorState e) {
        return (!t.sized() || e.fitsNow(t)) && (reserved != e || t == reservedFor) && !prefersElsewhere(t, e);
    }

    @Override
    public boolean assign(Task t, ExecutorState e) {
        if (!t.queued) {
            throw new IllegalStateException("task " + t.id + " is not queued");
        }
        if (!fits(t, e)) {
            return false;
        }
        if (t == reservedFor) {
            reserved = null;
            reservedFor = null;
        }
        scheduler.assign(t, e);
        return true;
    }

    // ---- data-aware views ----------------------------------------------------------------------

    @Override
    public int window() {
        Window w = ledger.window();
        return w == null ? ledger.queued() : w.size();
    }

    @Override
    public double utilization() {
        return pool.totalSlots() == 0 ? 1.0 : (double) ledger.runningCores() / pool.totalSlots();
    }

    @Override
    public double utilizationWithOneMore() {
        return pool.totalSlots() == 0 ? 1.0 : Math.min(1.0, (ledger.runningCores() + 1.0) / pool.totalSlots());
    }

    @Override
    public long cachedBytes(Task t, ExecutorState executor) {
        return t.inputIds == null ? 0 : pool.index().cachedBytes(t.inputIds, t.inputSizes, executor);
    }

    @Override
    public Task bestFor(ExecutorState e) {
        Window w = ledger.window();
        if (w == null) {
            throw new IllegalStateException(scheduler.policy().name() + " is not data-aware: it has no window");
        }
        return w.bestFor(e, t -> !fits(t, e));
    }

    @Override
    public ExecutorState bestWithCredit(Task t) {
        if (t.failedOn == null || !pool.someoneElseFor(t)) {
            return pool.bestWithCredit(t, x -> true);
        }
        return pool.bestWithCredit(t, x -> !t.avoids(x));
    }
}
