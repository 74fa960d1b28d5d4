package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.DispatchPolicy;
import io.falkon.protocol.DataCodec;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.ExtTags;
import io.falkon.protocol.Message;
import io.falkon.protocol.time.Clock;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The dispatcher's state machine, as a facade over the parts it owns ({@link Core}: the {@link
 * TaskLedger}, the {@link ExecutorPool}, the {@link InstanceRegistry}, the {@link Outbox}). It is
 * driven by one thread (see {@link SchedulerLoop}), takes each decoded message as an {@link Event}
 * through {@link #handle} (the one way in, for transports, tests and benchmarks alike) and hands it
 * to the handler of its kind: {@link ClientRequests} for what clients ask, {@link ExecutorEvents}
 * for what executors say, each ending tasks through {@link Outcomes} and the {@link Workflows}
 * layer; the timer and the end of a batch (the scheduling {@link Round}) are its own. It answers by
 * enqueueing messages on {@link Link}s; it does no I/O and reads time only from its {@link Clock},
 * so tests drive it directly with fake links and a fake clock. Restoring from and compacting the
 * journal is {@link Recovery}'s, building the status snapshot {@link StatusBuilder}'s.
 *
 * <p>Events are handled in batches: the transport delivers any number of events, then calls
 * {@link #endBatch()}, which runs one scheduling round, sends each executor's assignments as one
 * DISPATCH bundle, each instance's new results as one DELIVER, and hands the batch's writes to the
 * {@link Journal}, which sends them once the batch's records are durable.
 *
 * <p>Reliability (docs/reliability.md): a task whose executor is lost, rejects it, cannot start it
 * or fetch its input, or does not answer within the dispatch timeout is dispatched again while its
 * retry limit allows; exactly one result per task reaches the client. An executor that keeps
 * failing while others succeed is suspended. An instance with a lease outlives its client's
 * connection; its results are kept until the client acknowledges them, and a client re-attaches
 * to get them back.
 */
public final class Scheduler {
    private static final List<ExtField> BYPASS = List.of(new ExtField(ExtTags.BYPASS_CACHE, new byte[]{1}));

    private final String dispatcherId;
    private final Core core;
    private final long startedTick;
    private final Outcomes outcomes;
    private final ClientRequests clients;
    private final ExecutorEvents executors;
    private final Round round;
    private final Recovery recovery;
    private final StatusBuilder statusBuilder;

    public Scheduler(DispatchPolicy policy, Clock clock, String dispatcherId) {
        this(policy, clock, dispatcherId, SchedulerConfig.defaults(), Journal.NONE);
    }

    public Scheduler(DispatchPolicy policy, Clock clock, String dispatcherId, SchedulerConfig config, Journal journal) {
        this(policy, clock, dispatcherId, config, journal, ResultSpill.NONE, StatusRenderer.RECORDS);
    }

    /**
     * @param spill    where results awaiting acknowledgement go beyond a quarter of the memory budget
     * @param renderer writes the status documents clients ask for
     */
    public Scheduler(DispatchPolicy policy, Clock clock, String dispatcherId, SchedulerConfig config, Journal journal,
                     ResultSpill spill, StatusRenderer renderer) {
        this.dispatcherId = dispatcherId;
        this.core = new Core(policy, clock, config, journal, spill);
        this.startedTick = core.tickMicros;
        this.outcomes = new Outcomes(core);
        this.executors = new ExecutorEvents(core, outcomes);
        this.recovery = new Recovery(core.instances, core.ledger, core.pool, clock, (t, key) -> {
            core.refreshClock();
            outcomes.dependencyFailed(t, key);
        });
        this.clients = new ClientRequests(core, outcomes, this::snapshot, renderer, recovery);
        this.round = new Round(this, core.ledger, core.pool);
        this.statusBuilder = new StatusBuilder(dispatcherId, policy, core.ledger, core.pool, core.instances,
                core.memory, recovery::heldCount);
    }

    public String dispatcherId() {
        return dispatcherId;
    }

    public DispatchPolicy policy() {
        return core.policy;
    }

    public SchedulerConfig config() {
        return core.config;
    }

    /** Where a replayed journal restores the state, and a compacted one reads it (before or between events). */
    public Recovery recovery() {
        return recovery;
    }

    /** Carries out an event from a transport (see {@link Event}): each kind to its handler. */
    public void handle(Event e) {
        switch (e.kind()) {
            case CLIENT -> clients.handle(e);
            case EXECUTOR -> executors.handle(e.link(), e.message());
            case CLIENT_GONE -> clients.disconnected(e.link());
            case EXECUTOR_GONE -> executors.disconnected(e.link());
        }
    }

    /** The state at this moment, as an immutable copy that can be rendered on any thread. */
    public StatusSnapshot snapshot() {
        core.refreshClock();
        return statusBuilder.snapshot(core.tickMicros, startedTick, executors.data());
    }

    /** Completes the future once at least {@code count} executors are registered. */
    public void whenExecutors(int count, CompletableFuture<Void> future) {
        core.pool.whenRegistered(count, future);
    }

    /**
     * Stops accepting new instances and tasks and freezes the state: connections that close from
     * now on change nothing (a restart from the journal re-queues what was running).
     */
    public void shutDown(boolean releaseExecutors) {
        core.shuttingDown = true;
        if (releaseExecutors) {
            // they leave instead of dialling a dispatcher that is not coming back
            for (ExecutorState e : core.pool.all()) {
                e.link.close(Message.ErrorMessage.of(0, ErrorCode.SHUTTING_DOWN, "the dispatcher is shutting down"));
            }
        }
    }

    // ---- time ------------------------------------------------------------------------------

    /**
     * Called by the loop at least every 100 ms: dispatch timeouts, the end of suspensions and of
     * leases, the hold on replayed tasks, and journal compaction.
     *
     * @return whether tasks were queued (replayed ones released): a scheduling round is due
     */
    public boolean onTimer() {
        core.refreshClock();
        executors.expireDeadlines();
        clients.expireLeases();
        boolean released = recovery.releaseDue(core.tickMicros);
        if (core.journal.wantsCompaction()) {
            core.journal.compact(recovery::writeTo);
        }
        return released;
    }

    // ---- the round -------------------------------------------------------------------------

    /** Ends a batch of events: one scheduling round, then one write per link after the journal commit. */
    public void endBatch() {
        TaskLedger ledger = core.ledger;
        core.checkMemory();
        if (!ledger.isEmpty() && core.pool.totalCredits() > 0 && !core.memory.holdingDispatch()) {
            core.refreshClock();
            Task head;
            while ((head = ledger.head()) != null && head.sized() && outcomes.refuseIfTooLarge(head)) {
                // an executor that could hold it left since it was queued
            }
            if (ledger.window() != null) {
                ledger.window().fill();
            }
            round.begin();
            core.policy.schedule(round);
        }
        if (core.multicast != null) {
            core.refreshClock();
            core.multicast.step(core.tickMicros);
        }
        core.outbox.endRound();
        core.outbox.commit(core.journal);
    }

    /** The round's assignment (see {@link Round#assign}): queue to executor, credits used, into its bundle. */
    void assign(Task t, ExecutorState e) {
        core.pool.useCredits(e, t.cores);
        core.ledger.assign(t, e, core.nowMicros, core.tickMicros);
        core.outbox.dispatch(e, new Message.DispatchedTask(t.id, t.attempt, t.spec,
                t.inputIds == null && (t.flow == null || t.flow.temporary == null) ? ExtField.NONE : dataExt(t, e)));
    }

    /**
     * Location hints for a data-aware policy; otherwise the order to read straight from the store
     * and cache nothing (then temporary outputs are written through too).
     */
    private List<ExtField> dataExt(Task t, ExecutorState target) {
        if (core.ledger.window() == null) {
            return BYPASS;
        }
        if (t.inputIds == null) {
            return ExtField.NONE;
        }
        Map<String, List<String>> hints = new LinkedHashMap<>();
        for (String id : t.inputIds) {
            List<String> peers = core.pool.index().peers(id, target, 3);
            if (!peers.isEmpty()) {
                hints.put(id, peers);
            }
        }
        return hints.isEmpty() ? ExtField.NONE : List.of(new ExtField(ExtTags.HINTS, DataCodec.encodeHints(hints)));
    }

    long nowMicros() {
        return core.nowMicros;
    }

    // ---- read-only views for tests and status ----------------------------------------------

    public int queuedCount() {
        return core.ledger.queued();
    }

    /** Replayed tasks waiting for their clients to re-attach after a restart (see {@link Recovery}). */
    public int heldCount() {
        return recovery.heldCount();
    }

    /** Tasks waiting for what other tasks produce. */
    public int waitingCount() {
        return core.ledger.waiting();
    }

    public int runningCount() {
        return core.ledger.running();
    }

    public int executorCount() {
        return core.pool.size();
    }

    public int instanceCount() {
        return core.instances.size();
    }

    public long staleResults() {
        return executors.staleResults();
    }

    public long retried() {
        return core.ledger.retried();
    }

    /** Producers run again because the temporary objects they made were lost. */
    long reruns() {
        return outcomes.workflows().reruns();
    }

    /** Whether new bundles are refused with BUSY (over the memory budget). */
    public boolean refusingBundles() {
        return core.memory.refusing();
    }

    /** Whether dispatching waits for clients to acknowledge results. */
    public boolean holdingDispatch() {
        return core.memory.holdingDispatch();
    }

    /** Dispatched tasks with a deadline (a finished task has none: it must not be kept reachable). */
    int pendingDeadlines() {
        return core.ledger.deadlines();
    }

    public boolean suspended(String executorId) {
        ExecutorState e = core.pool.byId(executorId);
        return e != null && e.suspended();
    }

    /** Checks the counters against what they count (see {@link Invariants}); throws if they disagree. */
    public void checkInvariants() {
        Invariants.check(core.ledger, core.pool, core.instances);
    }
}
