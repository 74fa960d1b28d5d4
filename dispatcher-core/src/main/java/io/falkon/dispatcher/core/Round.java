package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.SchedulingRound;

import java.util.Collection;

/**
 * A scheduling round as the policy sees it: the queue and its window, the executors with their
 * credits, the cache index. {@link #assign} is the only way a policy acts, and it enforces what every
 * policy must respect: an executor's credits, and a retried task's wish to avoid the executors it
 * failed on while another can take it.
 */
final class Round implements SchedulingRound<Task, ExecutorState> {
    private final Scheduler scheduler;
    private final TaskLedger ledger;
    private final ExecutorPool pool;

    Round(Scheduler scheduler, TaskLedger ledger, ExecutorPool pool) {
        this.scheduler = scheduler;
        this.ledger = ledger;
        this.pool = pool;
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
    public boolean assign(Task t, ExecutorState e) {
        if (!t.queued) {
            throw new IllegalStateException("task " + t.id + " is not queued");
        }
        if (prefersElsewhere(t, e)) {
            return false;
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
        return pool.totalSlots() == 0 ? 1.0 : (double) ledger.running() / pool.totalSlots();
    }

    @Override
    public double utilizationWithOneMore() {
        return pool.totalSlots() == 0 ? 1.0 : Math.min(1.0, (ledger.running() + 1.0) / pool.totalSlots());
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
        return w.bestFor(e, t -> prefersElsewhere(t, e));
    }

    @Override
    public ExecutorState bestWithCredit(Task t) {
        if (t.failedOn == null || !pool.someoneElseFor(t)) {
            return pool.bestWithCredit(t, x -> true);
        }
        return pool.bestWithCredit(t, x -> !t.avoids(x));
    }
}
