package io.falkon.dispatcher.core;

import io.falkon.protocol.DataCodec;
import io.falkon.protocol.DataStats;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Execution;
import io.falkon.protocol.LogSafe;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * What executors say, and what becomes of their tasks: REGISTER, CREDIT, RESULT (with the credits it
 * returns), CACHE_UPDATE, a lost connection, and a dispatch that outlived its deadline. A task whose
 * executor is lost, rejects it, cannot start it or fetch its input, or does not answer in time is
 * dispatched again while its retry limit allows; an executor that keeps failing while others
 * succeed is suspended (docs/reliability.md).
 */
final class ExecutorEvents {
    private static final Logger log = LoggerFactory.getLogger(ExecutorEvents.class);

    private final Core core;
    private final Outcomes outcomes;
    private final Workflows workflows;
    private long staleResults;
    private DataStats data = DataStats.ZERO;

    ExecutorEvents(Core core, Outcomes outcomes) {
        this.core = core;
        this.outcomes = outcomes;
        this.workflows = outcomes.workflows();
    }

    /** Results for attempts no longer waited for (cancelled meanwhile, or retried elsewhere). */
    long staleResults() {
        return staleResults;
    }

    /** Where the inputs of every finished task came from, summed. */
    DataStats data() {
        return data;
    }

    void handle(Link link, Message m) {
        switch (m.type()) {
            case REGISTER -> register(link, (Message.Register) m);
            case CREDIT -> credit(link, ((Message.Credit) m).credits());
            case RESULT -> results(link, (Message.Result) m);
            case CACHE_UPDATE -> cacheUpdate(link, (Message.CacheUpdate) m);
            // unreachable: Admission hands on only what Role.EXECUTOR sends
            default -> throw new IllegalArgumentException(m.type() + " is not an executor message");
        }
    }

    /**
     * A connection completed its handshake as an executor and sent REGISTER. An executor that
     * registers again under an id still connected (it reconnected before its old connection was
     * noticed dead) replaces the old connection, whose tasks are handled as lost.
     */
    private void register(Link link, Message.Register reg) {
        core.refreshClock();
        String problem = ExecutorPool.problem(reg);
        if (problem != null) {
            link.close(Message.ErrorMessage.of(0, ErrorCode.MALFORMED, problem));
            return;
        }
        ExecutorState old = core.pool.byId(reg.executorId());
        if (old != null) {
            log.warn("executor {} registered again from {}; dropping its old connection from {}",
                    LogSafe.text(reg.executorId()), link.remote(), old.link.remote());
            old.link.close(Message.ErrorMessage.of(0, ErrorCode.DUPLICATE_EXECUTOR,
                    "executor id '" + reg.executorId() + "' registered again on another connection"));
            disconnected(old.link);
        }
        ExecutorState e = core.pool.add(link, reg, core.tickMicros);
        if (core.multicast != null) {
            core.multicast.executorJoined(e);
        }
        core.resizeWindow();
        log.info("executor {} registered from {} ({} slots{})", LogSafe.text(e.id), link.remote(), e.slots,
                e.noExec ? ", NO-EXEC benchmark mode" : "");
    }

    /** CREDIT from an executor. */
    private void credit(Link link, int credits) {
        ExecutorState e = executor(link, "CREDIT");
        if (e != null) {
            addCredits(e, credits);
        }
    }

    private ExecutorState executor(Link link, String what) {
        ExecutorState e = core.pool.byLink(link);
        if (e == null) {
            link.close(Message.ErrorMessage.of(0, ErrorCode.UNEXPECTED_MESSAGE, what + " before REGISTER"));
        }
        return e;
    }

    private void addCredits(ExecutorState e, int credits) {
        if (!core.pool.addCredits(e, credits)) {
            e.link.close(Message.ErrorMessage.of(0, ErrorCode.MALFORMED, "credits: " + credits + " more would "
                    + "give executor " + e.id + " over " + ExecutorPool.MAX_CREDITS));
            disconnected(e.link);
        }
    }

    /** RESULT from an executor: completed tasks plus piggy-backed credits. */
    private void results(Link link, Message.Result result) {
        ExecutorState e = executor(link, "RESULT");
        if (e == null) {
            return;
        }
        core.refreshClock();
        addCredits(e, result.credits());
        List<Message.TaskResult> list = result.results();
        for (int i = 0, n = list.size(); i < n; i++) {
            Message.TaskResult r = list.get(i);
            Task t = e.task(r.taskId());
            if (t == null || t.attempt != r.attempt()) {
                // cancelled meanwhile, or an answer for an attempt we no longer wait for
                staleResults++;
                continue;
            }
            core.ledger.unassign(t);
            core.pool.returned(e);
            Execution x = r.execution();
            if (x.status() != TaskStatus.CANCELLED) {
                recordOutcome(e, !x.succeeded() && !x.permanent()); // a permanent failure is not the node's
            }
            if (t.inputIds != null) {
                data = data.plus(DataCodec.statsOf(x));
            }
            if (workflows.resulted(t, e, x)) {
                continue; // a temporary input was lost: it is being made again, and the task waits for it
            }
            if (x.status().retryable() && !x.permanent() && t.canRetry()) {
                retry(t, e, x.status() + (x.detail().isEmpty() ? "" : " (" + x.detail() + ")"));
            } else if (t.retriesOwnFailure(x)) {
                // --retries: it failed on its own; run it again, elsewhere if another executor can
                retry(t, e, x.status() == TaskStatus.TIMEOUT ? "timeout" : "exit " + x.exitCode());
            } else {
                outcomes.complete(t, e.id, x);
            }
        }
    }

    private void recordOutcome(ExecutorState e, boolean failed) {
        if (core.pool.recordOutcome(e, failed, core.tickMicros) && core.ledger.window() != null) {
            core.ledger.window().executorGone(e);
        }
    }

    /** An executor's connection closed (or it stopped heartbeating). Its running tasks go elsewhere. */
    void disconnected(Link link) {
        if (core.shuttingDown) {
            return; // the state is frozen for the journal; a restart re-queues what was running
        }
        ExecutorState e = core.pool.remove(link);
        if (e == null) {
            return;
        }
        core.refreshClock();
        if (core.ledger.window() != null) {
            core.ledger.window().executorGone(e);
        }
        core.resizeWindow();
        workflows.executorLost(e); // before its tasks are retried: they may need what it held
        if (core.multicast != null) {
            core.multicast.executorGone(e);
        }
        List<Task> lost = new ArrayList<>(e.runningTasks());
        int requeued = 0;
        for (Task t : lost) {
            core.ledger.unassign(t);
            if (t.canRetry()) {
                retry(t, e, "executor lost");
                requeued++;
            } else {
                outcomes.complete(t, e.id, Execution.of(TaskStatus.EXECUTOR_LOST,
                        "executor " + e.id + " disconnected while running the task (attempt " + (t.attempt + 1)
                                + ", no retries left)", core.nowMicros));
            }
        }
        log.info("executor {} disconnected ({} running tasks: {} re-queued, {} reported lost)", LogSafe.text(e.id),
                lost.size(), requeued, lost.size() - requeued);
    }

    /** A task that failed on {@code e} for a framework reason goes back to the queue for another attempt. */
    private void retry(Task t, ExecutorState e, String why) {
        if (workflows.retrying(t, e)) {
            return; // it waits for a temporary input being made again (or cannot run)
        }
        t.failedOn(e);
        core.ledger.requeue(t);
        if (log.isDebugEnabled()) {
            log.debug("task {} re-queued for attempt {}: {}: {}", t.id, t.attempt + 1, LogSafe.text(e.id),
                    LogSafe.text(why));
        }
    }

    /** The timer: dispatches whose deadline passed are presumed lost, and run again while they may. */
    void expireDeadlines() {
        for (Task t : core.ledger.expired(core.tickMicros)) {
            ExecutorState e = t.executor;
            core.ledger.unassign(t);
            core.outbox.send(e.link, new Message.Cancel(new long[]{t.id}));
            recordOutcome(e, true);
            if (t.canRetry()) {
                retry(t, e, "no result within " + t.dispatchTimeoutMillis + " ms");
            } else {
                outcomes.complete(t, e.id, Execution.of(TaskStatus.TIMEOUT, "no result from executor " + e.id
                        + " within the dispatch timeout of " + t.dispatchTimeoutMillis + " ms (no retries left)",
                        core.nowMicros));
            }
        }
        core.pool.resumeDue(core.tickMicros);
    }

    /** CACHE_UPDATE: what an executor's cache gained and lost (or, when full, all it holds). */
    private void cacheUpdate(Link link, Message.CacheUpdate update) {
        ExecutorState e = executor(link, "CACHE_UPDATE");
        if (e == null) {
            return;
        }
        if (core.pool.cacheUpdate(e, update) && core.ledger.window() != null) {
            core.ledger.window().replaceAll(e); // tasks waiting for it may wait for data it no longer has
        }
        if (core.multicast != null && core.multicast.active() > 0) {
            for (Message.CachedObject o : update.added()) {
                core.multicast.arrived(e, o.id());
            }
        }
    }
}
