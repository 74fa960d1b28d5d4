package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.DispatchPolicy;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Message;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.time.Clock;

/**
 * The parts of the scheduler core and what every handler of an event reads: the {@link TaskLedger}
 * (queue, window, deadlines, task counters), the {@link ExecutorPool} (registry, credits, health,
 * cache index), the {@link InstanceRegistry} (instances, owners, leases, kept results), the
 * {@link Outbox} (what a batch sends), the journal and the memory budget, and the clock's readings
 * for the event at hand (taken once per event, not once per task). The {@link Scheduler} makes it
 * and hands it to the handlers of each kind of event ({@link ClientRequests}, {@link ExecutorEvents},
 * {@link Outcomes}); each part still owns its own state.
 */
final class Core {
    final DispatchPolicy policy;
    final SchedulerConfig config;
    final Clock clock;
    final Journal journal;
    final ExecutorPool pool;
    final TaskLedger ledger;
    final InstanceRegistry instances;
    final Outbox outbox;
    final MemoryBudget memory;
    /** Copies objects many queued tasks read to every executor along a tree; null without data diffusion. */
    final Multicast multicast;
    /** Wall-clock and monotonic readings, taken once per event ({@link #refreshClock}). */
    long nowMicros;
    long tickMicros;
    /** The state is frozen for the journal: connections that close change nothing, nothing new is accepted. */
    boolean shuttingDown;

    Core(DispatchPolicy policy, Clock clock, SchedulerConfig config, Journal journal, ResultSpill spill) {
        this.policy = policy;
        this.config = config;
        this.clock = clock;
        this.journal = journal;
        this.instances = new InstanceRegistry(spill, config.memoryBudgetBytes() / 4, config::shareOf);
        this.memory = new MemoryBudget(config.memoryBudgetBytes());
        this.pool = new ExecutorPool(config);
        this.outbox = new Outbox(Protocol.DEFAULT_MAX_FRAME_LENGTH);
        this.multicast = policy.dataAware() && config.multicast() ? new Multicast(pool, outbox) : null;
        this.ledger = new TaskLedger(policy.dataAware() ? new Window(pool.index(), windowSize(0)) : null, config,
                multicast);
        refreshClock();
    }

    /** Reads the clock once per event rather than once per task. */
    void refreshClock() {
        nowMicros = clock.nowMicros();
        tickMicros = clock.tickMicros();
    }

    /** The configured window, or 100 tasks per executor (the papers' choice). */
    int windowSize(int executors) {
        return config.windowSize() > 0 ? config.windowSize() : Math.max(100, 100 * executors);
    }

    /** The window follows the number of executors (data-aware policies). */
    void resizeWindow() {
        if (ledger.window() != null) {
            ledger.window().resize(windowSize(pool.size()));
        }
    }

    void replyError(Link link, long requestId, ErrorCode code, String message) {
        outbox.send(link, Message.ErrorMessage.of(requestId, code, message));
    }

    /** Whether bundles wait or dispatching holds: the memory budget checked against what is held now. */
    void checkMemory() {
        memory.check(ledger.queuedBytes() + ledger.waitingBytes(), ledger.runningBytes(), instances.retainedBytes());
    }
}
