package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.DispatchPolicy;
import io.falkon.protocol.DataCodec;
import io.falkon.protocol.DataStats;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Execution;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.ExtTags;
import io.falkon.protocol.LogSafe;
import io.falkon.protocol.Message;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.TaskSpecCodec;
import io.falkon.protocol.TaskStatus;
import io.falkon.protocol.time.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The dispatcher's state machine, as a facade over the parts it owns: the {@link TaskLedger}
 * (queue, window, deadlines, task counters), the {@link ExecutorPool} (registry, credits, health,
 * cache index), the {@link InstanceRegistry} (instances, owners, leases, kept results) and the
 * {@link Outbox} (what a batch sends). It is driven by one thread (see {@link SchedulerLoop}), takes
 * each decoded message as an {@link Event} through {@link #handle} (the one way in, for transports,
 * tests and benchmarks alike), and answers by enqueueing messages on {@link Link}s; it does no I/O and
 * reads time only from its {@link Clock}, so tests drive it directly with fake links and a fake
 * clock. Restoring from and compacting the journal is {@link Recovery}'s, building the status
 * snapshot {@link StatusBuilder}'s.
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
    private static final Logger log = LoggerFactory.getLogger(Scheduler.class);
    /** Kept results go back to a client that takes its instance over in DELIVERs of at most this much. */
    static final long REDELIVER_CHUNK_BYTES = 4 << 20;
    static final int REDELIVER_CHUNK_RESULTS = 10_000;
    private static final List<ExtField> BYPASS = List.of(new ExtField(ExtTags.BYPASS_CACHE, new byte[]{1}));

    private final DispatchPolicy policy;
    private final Clock clock;
    private final String dispatcherId;
    private final SchedulerConfig config;
    private final Journal journal;
    private final long startedTick;
    private final ExecutorPool pool;
    private final TaskLedger ledger;
    private final InstanceRegistry instances;
    private final Outbox outbox;
    private final Intermediates intermediates;
    /** Copies objects many queued tasks read to every executor along a tree; null without data diffusion. */
    private final Multicast multicast;
    private final Round round;
    private final Recovery recovery;
    private final StatusBuilder statusBuilder;
    private final StatusRenderer renderer;

    private long staleResults;
    private final MemoryBudget memory;
    private DataStats data = DataStats.ZERO;
    private boolean shuttingDown;
    /** Wall-clock and monotonic readings, taken once per event rather than once per task. */
    private long nowMicros;
    private long tickMicros;

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
        this.policy = policy;
        this.renderer = renderer;
        this.instances = new InstanceRegistry(spill, config.memoryBudgetBytes() / 4, config::shareOf);
        this.clock = clock;
        this.dispatcherId = dispatcherId;
        this.config = config;
        this.memory = new MemoryBudget(config.memoryBudgetBytes());
        this.journal = journal;
        refreshClock();
        this.startedTick = tickMicros;
        this.pool = new ExecutorPool(config);
        this.outbox = new Outbox(Protocol.DEFAULT_MAX_FRAME_LENGTH);
        this.multicast = policy.dataAware() && config.multicast() ? new Multicast(pool, outbox) : null;
        this.ledger = new TaskLedger(policy.dataAware() ? new Window(pool.index(), windowSize(0)) : null, config,
                multicast);
        this.intermediates = new Intermediates(ledger, pool.index(), outbox, new Intermediates.Completion() {
            @Override
            public void complete(Task t, Execution x) {
                Scheduler.this.complete(t, "", x);
            }

            @Override
            public Execution dependencyFailed(Dataflow.Key key) {
                return dependencyExecution(key, key.failedProducer);
            }
        });
        this.round = new Round(this, ledger, pool);
        this.statusBuilder = new StatusBuilder(dispatcherId, policy, ledger, pool, instances, memory);
        this.recovery = new Recovery(instances, ledger, pool, clock, (t, key) -> {
            refreshClock();
            dependencyFailed(t, key);
        });
    }

    /** The configured window, or 100 tasks per executor (the papers' choice). */
    private int windowSize(int executors) {
        return config.windowSize() > 0 ? config.windowSize() : Math.max(100, 100 * executors);
    }

    public String dispatcherId() {
        return dispatcherId;
    }

    public DispatchPolicy policy() {
        return policy;
    }

    public SchedulerConfig config() {
        return config;
    }

    /** Where a replayed journal restores the state, and a compacted one reads it (before or between events). */
    public Recovery recovery() {
        return recovery;
    }

    private void replyError(Link link, long requestId, ErrorCode code, String message) {
        outbox.send(link, Message.ErrorMessage.of(requestId, code, message));
    }

    /** Answers a request the transport refused before it got here (e.g. an invalid task spec). */
    private void rejectRequest(Link link, long requestId, ErrorCode code, String message) {
        instances.client(link);
        replyError(link, requestId, code, message);
    }

    /** Carries out an event from a transport (see {@link Event}). */
    public void handle(Event e) {
        switch (e.kind()) {
            case CLIENT -> clientRequest(e);
            case EXECUTOR -> executorMessage(e.link(), e.message());
            case CLIENT_GONE -> clientDisconnected(e.link());
            case EXECUTOR_GONE -> executorDisconnected(e.link());
        }
    }

    private void clientRequest(Event e) {
        Link link = e.link();
        Message m = e.message();
        switch (m.type()) {
            case CREATE_INSTANCE -> createInstance(link, (Message.CreateInstance) m);
            case SUBMIT -> submit(link, (Message.Submit) m, e.scans());
            case STATUS_REQUEST -> status(link, (Message.StatusRequest) m);
            case DESTROY -> destroy(link, (Message.Destroy) m);
            case HALT -> halt(link, (Message.Halt) m);
            case ATTACH -> attach(link, (Message.Attach) m);
            case ACK -> ack(link, (Message.Ack) m);
            case ERROR -> {
                Message.ErrorMessage err = (Message.ErrorMessage) m; // the admission stage refused the request
                if (err.errorCode() == ErrorCode.BUSY) {
                    memory.refused(); // too many bundles waiting for this thread (SchedulerLoop#offerBundle)
                }
                rejectRequest(link, err.requestId(), err.errorCode(), err.message());
            }
            // unreachable: Admission hands on only what Role.CLIENT sends (and its own ERROR answers)
            default -> throw new IllegalArgumentException(m.type() + " is not a client request");
        }
    }

    private void executorMessage(Link link, Message m) {
        switch (m.type()) {
            case REGISTER -> registerExecutor(link, (Message.Register) m);
            case CREDIT -> credit(link, ((Message.Credit) m).credits());
            case RESULT -> results(link, (Message.Result) m);
            case CACHE_UPDATE -> cacheUpdate(link, (Message.CacheUpdate) m);
            // unreachable: Admission hands on only what Role.EXECUTOR sends
            default -> throw new IllegalArgumentException(m.type() + " is not an executor message");
        }
    }

    // ---- executors -------------------------------------------------------------------------

    /**
     * A connection completed its handshake as an executor and sent REGISTER. An executor that
     * registers again under an id still connected (it reconnected before its old connection was
     * noticed dead) replaces the old connection, whose tasks are handled as lost.
     */
    private void registerExecutor(Link link, Message.Register reg) {
        refreshClock();
        String problem = ExecutorPool.problem(reg);
        if (problem != null) {
            link.close(Message.ErrorMessage.of(0, ErrorCode.MALFORMED, problem));
            return;
        }
        ExecutorState old = pool.byId(reg.executorId());
        if (old != null) {
            log.warn("executor {} registered again from {}; dropping its old connection from {}",
                    LogSafe.text(reg.executorId()), link.remote(), old.link.remote());
            old.link.close(Message.ErrorMessage.of(0, ErrorCode.DUPLICATE_EXECUTOR,
                    "executor id '" + reg.executorId() + "' registered again on another connection"));
            executorDisconnected(old.link);
        }
        ExecutorState e = pool.add(link, reg, tickMicros);
        if (multicast != null) {
            multicast.executorJoined(e);
        }
        resizeWindow();
        log.info("executor {} registered from {} ({} slots{})", LogSafe.text(e.id), link.remote(), e.slots,
                e.noExec ? ", NO-EXEC benchmark mode" : "");
    }

    private void resizeWindow() {
        if (ledger.window() != null) {
            ledger.window().resize(windowSize(pool.size()));
        }
    }

    /** CREDIT from an executor. */
    private void credit(Link link, int credits) {
        ExecutorState e = executor(link, "CREDIT");
        if (e != null) {
            addCredits(e, credits);
        }
    }

    private ExecutorState executor(Link link, String what) {
        ExecutorState e = pool.byLink(link);
        if (e == null) {
            link.close(Message.ErrorMessage.of(0, ErrorCode.UNEXPECTED_MESSAGE, what + " before REGISTER"));
        }
        return e;
    }

    private void addCredits(ExecutorState e, int credits) {
        if (!pool.addCredits(e, credits)) {
            e.link.close(Message.ErrorMessage.of(0, ErrorCode.MALFORMED, "credits: " + credits + " more would "
                    + "give executor " + e.id + " over " + ExecutorPool.MAX_CREDITS));
            executorDisconnected(e.link);
        }
    }

    /** RESULT from an executor: completed tasks plus piggy-backed credits. */
    private void results(Link link, Message.Result result) {
        ExecutorState e = executor(link, "RESULT");
        if (e == null) {
            return;
        }
        refreshClock();
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
            ledger.unassign(t);
            pool.returned(e);
            Execution x = r.execution();
            if (x.status() != TaskStatus.CANCELLED) {
                recordOutcome(e, !x.succeeded() && !x.permanent()); // a permanent failure is not the node's
            }
            if (t.inputIds != null) {
                data = data.plus(DataCodec.statsOf(x));
            }
            if (x.succeeded() && t.temporary != null) {
                intermediates.produced(t, e, x);
            }
            if (x.status() == TaskStatus.FETCH_FAILED && t.readsTemporary
                    && intermediates.awaitMissing(t, e, nowMicros)) {
                continue; // a temporary input was lost: it is being made again, and the task waits for it
            }
            if (x.succeeded() && t.outputIds != null && e.cachePeer != null && ledger.window() != null) {
                // its outputs are in its cache now (the CACHE_UPDATE saying so may come later): the tasks
                // it releases go where they are (seed 004's pipeline pattern)
                for (String id : t.outputIds) {
                    pool.index().add(e, id, 0);
                }
            }
            if (x.status().retryable() && !x.permanent() && t.canRetry()) {
                retry(t, e, x.status() + (x.detail().isEmpty() ? "" : " (" + x.detail() + ")"));
            } else if (t.retriesOwnFailure(x)) {
                // --retries: it failed on its own; run it again, elsewhere if another executor can
                retry(t, e, x.status() == TaskStatus.TIMEOUT ? "timeout" : "exit " + x.exitCode());
            } else {
                complete(t, e.id, x);
            }
        }
    }

    private void recordOutcome(ExecutorState e, boolean failed) {
        if (pool.recordOutcome(e, failed, tickMicros) && ledger.window() != null) {
            ledger.window().executorGone(e);
        }
    }

    /** An executor's connection closed (or it stopped heartbeating). Its running tasks go elsewhere. */
    private void executorDisconnected(Link link) {
        if (shuttingDown) {
            return; // the state is frozen for the journal; a restart re-queues what was running
        }
        ExecutorState e = pool.remove(link);
        if (e == null) {
            return;
        }
        refreshClock();
        if (ledger.window() != null) {
            ledger.window().executorGone(e);
        }
        resizeWindow();
        intermediates.holderLost(e, nowMicros); // before its tasks are retried: they may need what it held
        if (multicast != null) {
            multicast.executorGone(e);
        }
        List<Task> lost = new ArrayList<>(e.runningTasks());
        int requeued = 0;
        for (Task t : lost) {
            ledger.unassign(t);
            if (t.canRetry()) {
                retry(t, e, "executor lost");
                requeued++;
            } else {
                complete(t, e.id, Execution.of(TaskStatus.EXECUTOR_LOST,
                        "executor " + e.id + " disconnected while running the task (attempt " + (t.attempt + 1)
                                + ", no retries left)", nowMicros));
            }
        }
        log.info("executor {} disconnected ({} running tasks: {} re-queued, {} reported lost)", LogSafe.text(e.id),
                lost.size(), requeued, lost.size() - requeued);
    }

    /** A task that failed on {@code e} for a framework reason goes back to the queue for another attempt. */
    private void retry(Task t, ExecutorState e, String why) {
        if (t.readsTemporary && intermediates.awaitMissing(t, e, nowMicros)) {
            return; // it waits for a temporary input being made again (or cannot run)
        }
        t.failedOn(e);
        ledger.requeue(t);
        if (log.isDebugEnabled()) {
            log.debug("task {} re-queued for attempt {}: {}: {}", t.id, t.attempt + 1, LogSafe.text(e.id),
                    LogSafe.text(why));
        }
    }

    // ---- clients ---------------------------------------------------------------------------

    private void createInstance(Link link, Message.CreateInstance req) {
        refreshClock();
        instances.client(link);
        if (shuttingDown) {
            replyError(link, req.requestId(), ErrorCode.SHUTTING_DOWN, "the dispatcher is shutting down");
            return;
        }
        Instance in = instances.create(link, req.clientName(), req.leaseSeconds(), nowMicros);
        instances.touched(in, tickMicros);
        if (in.retainsResults()) {
            journal.instanceCreated(in.record());
        }
        log.debug("instance {} created for '{}' at {}", LogSafe.instance(in.id), LogSafe.text(req.clientName()),
                link.remote());
        outbox.send(link, new Message.InstanceCreated(req.requestId(), in.id, in.secret));
    }

    private Instance ownedInstance(Link link, long requestId, long instanceId) {
        instances.client(link);
        refreshClock();
        Instance in = instances.owned(link, instanceId, tickMicros);
        if (in == null) {
            replyError(link, requestId, ErrorCode.UNKNOWN_INSTANCE,
                    "no instance " + LogSafe.instance(instanceId) + " on this connection");
        }
        return in;
    }

    /**
     * SUBMIT whose task specs the transport has already validated; {@code scans} has one per task.
     * Client task ids are unique within an instance: a bundle whose every id was accepted before is a
     * re-sent bundle (after a reconnection, or a retried WS call whose reply was lost) and is answered
     * as accepted again without queueing anything; a bundle that reuses some ids, or repeats one, is
     * refused as a whole.
     */
    private void submit(Link link, Message.Submit req, TaskSpecCodec.Scan[] scans) {
        Instance in = ownedInstance(link, req.requestId(), req.instanceId());
        if (in == null) {
            return;
        }
        if (shuttingDown) {
            replyError(link, req.requestId(), ErrorCode.SHUTTING_DOWN, "the dispatcher is shutting down");
            return;
        }
        refreshClock();
        List<Message.SubmittedTask> tasks = req.tasks();
        if (in.halted()) {
            replyError(link, req.requestId(), ErrorCode.INVALID_TASK, "instance " + LogSafe.instance(in.id)
                    + " was halted: it starts nothing more; nothing of this bundle was queued");
            return;
        }
        String refused = duplicates(in, tasks);
        if (refused != null) {
            if (refused.isEmpty()) { // every id accepted before: the same bundle again
                outbox.send(link, new Message.Submitted(req.requestId(), in.id, tasks.size()));
            } else {
                replyError(link, req.requestId(), ErrorCode.INVALID_TASK, refused + "; nothing of this bundle was queued");
            }
            return;
        }
        memory.check(ledger.queuedBytes() + ledger.waitingBytes(), ledger.runningBytes(), instances.retainedBytes());
        if (memory.refusing()) {
            memory.refused();
            replyError(link, req.requestId(), ErrorCode.BUSY, "the dispatcher is over its memory budget of "
                    + (memory.budgetBytes() >> 20) + " MiB; nothing of this bundle was queued: send it again later");
            return;
        }
        String dataflowProblem = dataflowProblem(in, tasks, scans);
        if (dataflowProblem != null) {
            replyError(link, req.requestId(), ErrorCode.INVALID_TASK, dataflowProblem + "; nothing of this bundle was queued");
            return;
        }
        Dataflow.Key[] failed = new Dataflow.Key[1];
        for (int i = 0, n = tasks.size(); i < n; i++) {
            Message.SubmittedTask s = tasks.get(i);
            in.accept(s.clientTaskId());
            if (in.retainsResults()) {
                journal.accepted(in.id, s.clientTaskId(), nowMicros, s.spec());
            }
            Task t = ledger.accept(in, s.clientTaskId(), s.spec(), nowMicros, scans[i], failed);
            if (failed[0] != null) {
                dependencyFailed(t, failed[0]);
                failed[0] = null;
            } else if (t.sized() && t.queued) {
                refuseIfTooLarge(t);
            }
        }
        outbox.send(link, new Message.Submitted(req.requestId(), in.id, tasks.size()));
    }

    /**
     * Why a bundle cannot join its instance's dataflow, naming the first task at fault, or null: a
     * task declares an object id or a name another task already has, or runs {@code after} a name
     * no task before it has. Checked whole, before anything of the bundle is queued.
     */
    private static String dataflowProblem(Instance in, List<Message.SubmittedTask> tasks, TaskSpecCodec.Scan[] scans) {
        Dataflow.Declared declared = null;
        Dataflow df = in.dataflow;
        for (int i = 0, n = tasks.size(); i < n; i++) {
            TaskSpecCodec.Scan s = scans[i];
            if (!s.produces() && s.after() == null) {
                continue;
            }
            if (declared == null) {
                declared = new Dataflow.Declared();
            }
            String problem = (df == null ? Dataflow.EMPTY : df).problem(s.outputIds(), s.name(), s.after(), declared);
            if (problem != null) {
                return "task " + i + " of the bundle (clientTaskId " + Long.toUnsignedString(tasks.get(i).clientTaskId())
                        + "): " + problem;
            }
        }
        return null;
    }

    /** A task that can never run: a key it needs failed (its producer did not succeed). */
    private void dependencyFailed(Task t, Dataflow.Key key) {
        complete(t, "", dependencyExecution(key, key.failedProducer));
    }

    private Execution dependencyExecution(Dataflow.Key key, long producer) {
        String what = key.isName ? "to run after '" + key.id + "'" : key.lost ? "its temporary input '" + key.id
                + "', which was lost and made again" : "its input '" + key.id + "'";
        List<ExtField> ext = List.of(new ExtField(ExtTags.DEPENDENCY,
                DataCodec.encodeDependency(new DataCodec.Dependency(producer, key.what()))));
        return new Execution(TaskStatus.DEPENDENCY_FAILED, -1, 0, nowMicros, nowMicros, new byte[0], new byte[0],
                "not run: it needs " + what + ", and task " + Long.toUnsignedString(producer) + " did not succeed",
                ext);
    }

    /**
     * Null when every id of the bundle is new and distinct; empty when every id was accepted before
     * (a re-sent bundle); otherwise why the bundle is refused, naming the first offending task.
     */
    private static String duplicates(Instance in, List<Message.SubmittedTask> tasks) {
        int seen = 0;
        for (int i = 0, n = tasks.size(); i < n; i++) {
            if (in.hasAccepted(tasks.get(i).clientTaskId())) {
                seen++;
            }
        }
        if (seen == tasks.size() && seen > 0) {
            return "";
        }
        Set<Long> inBundle = null;
        long previous = Long.MIN_VALUE;
        for (int i = 0, n = tasks.size(); i < n; i++) {
            long id = tasks.get(i).clientTaskId();
            if (in.hasAccepted(id)) {
                return "task " + i + " of the bundle (clientTaskId " + Long.toUnsignedString(id)
                        + "): the id is already used in this instance";
            }
            // clients number tasks in increasing order: only a bundle that is not needs a set
            if (inBundle == null && id <= previous && i > 0) {
                inBundle = new HashSet<>();
                for (int k = 0; k < i; k++) {
                    inBundle.add(tasks.get(k).clientTaskId());
                }
            }
            if (inBundle != null && !inBundle.add(id)) {
                return "task " + i + " of the bundle (clientTaskId " + Long.toUnsignedString(id)
                        + "): the id appears twice in the bundle";
            }
            previous = id;
        }
        return null;
    }

    private void destroy(Link link, Message.Destroy req) {
        Instance in = ownedInstance(link, req.requestId(), req.instanceId());
        if (in == null) {
            return;
        }
        refreshClock();
        int cancelled = cancel(in, "instance destroyed");
        outbox.deliverNow(in);
        forget(in);
        outbox.send(link, new Message.Destroyed(req.requestId(), in.id, cancelled));
    }

    /**
     * HALT: nothing more of the instance starts. Its queued tasks end CANCELLED (delivered, and
     * journaled, as any result); its running ones finish; later SUBMITs are refused.
     */
    private void halt(Link link, Message.Halt req) {
        Instance in = ownedInstance(link, req.requestId(), req.instanceId());
        if (in == null) {
            return;
        }
        refreshClock();
        in.halt();
        long before = in.cancelled;
        Execution cancelled = Execution.of(TaskStatus.CANCELLED, "the instance was halted before the task started",
                nowMicros);
        ledger.dequeueAll(in, t -> complete(t, "", cancelled));
        cancelWaiting(in, cancelled);
        outbox.send(link, new Message.Halted(req.requestId(), in.id, (int) (in.cancelled - before)));
    }

    /**
     * ATTACH: the connection takes over an instance (its own after reconnecting, or one whose id and
     * secret it was given), and the results delivered but not acknowledged are delivered again, after
     * the ATTACHED reply. A wrong secret is answered exactly like an unknown id.
     */
    private void attach(Link link, Message.Attach req) {
        instances.client(link);
        refreshClock();
        Instance in = instances.get(req.instanceId());
        if (in == null || !in.secretMatches(req.secret())) {
            if (in != null) {
                log.warn("refused ATTACH to instance {} from {}: wrong secret", LogSafe.instance(in.id), link.remote());
            }
            replyError(link, req.requestId(), ErrorCode.UNKNOWN_INSTANCE, "no instance "
                    + LogSafe.instance(req.instanceId()) + " with that secret (destroyed, its lease ran out, it was "
                    + "created without a lease, or the secret is wrong)");
            return;
        }
        if (in.owner != null && in.owner != link) {
            log.info("instance {} re-attached from {} (was {})", LogSafe.instance(in.id), link.remote(),
                    in.owner.remote());
        }
        instances.attach(in, link);
        instances.touched(in, tickMicros);
        long kept = in.unackedCount();
        outbox.send(link, new Message.Attached(req.requestId(), in.id, in.highestClientTaskId(),
                (int) Math.min(Integer.MAX_VALUE, kept)));
        if (kept > 0) {
            redeliver(link, in);
        }
        outbox.drop(in); // everything gathered for it is in unacked and was just sent
    }

    /** Every kept result of the instance, in DELIVERs that each stay well within a frame. */
    private void redeliver(Link link, Instance in) {
        List<Message.DeliveredResult> chunk = new ArrayList<>();
        long[] bytes = {0};
        instances.forEachRetained(in, r -> {
            long b = Instance.footprint(r);
            if (!chunk.isEmpty() && (bytes[0] + b > REDELIVER_CHUNK_BYTES || chunk.size() >= REDELIVER_CHUNK_RESULTS)) {
                outbox.send(link, new Message.Deliver(in.id, new ArrayList<>(chunk)));
                chunk.clear();
                bytes[0] = 0;
            }
            chunk.add(r);
            bytes[0] += b;
        });
        if (!chunk.isEmpty()) {
            outbox.send(link, new Message.Deliver(in.id, chunk));
        }
    }

    /** ACK: the client has all results up to {@code upToSeq}; they need not be kept any longer. */
    private void ack(Link link, Message.Ack ack) {
        refreshClock();
        Instance in = instances.owned(link, ack.instanceId(), tickMicros);
        if (in == null) {
            return; // acknowledging what is gone changes nothing
        }
        if (instances.acknowledge(in, ack.upToSeq())) {
            journal.acked(in.id, ack.upToSeq());
        }
    }

    /**
     * A client's connection closed. Instances with a lease stay, detached, until it runs out (their
     * tasks keep running and their results are kept); the others are destroyed at once.
     */
    private void clientDisconnected(Link link) {
        if (shuttingDown) {
            instances.disconnected(link);
            return; // instances stay as journaled, for clients to re-attach after a restart
        }
        List<Instance> owned = instances.disconnected(link);
        if (owned.isEmpty()) {
            return;
        }
        refreshClock();
        for (Instance in : new ArrayList<>(owned)) {
            if (in.retainsResults()) {
                instances.detach(in, tickMicros);
                log.info("client {} disconnected: instance {} detached, kept for {} s", link.remote(),
                        LogSafe.instance(in.id), in.leaseMicros / 1_000_000);
                continue;
            }
            int n = cancel(in, "client disconnected");
            outbox.drop(in);
            forget(in);
            if (n > 0) {
                log.info("client {} disconnected: instance {} destroyed, {} unfinished tasks cancelled",
                        link.remote(), LogSafe.instance(in.id), n);
            }
        }
    }

    private void forget(Instance in) {
        intermediates.forget(in);
        instances.forget(in);
        if (in.retainsResults()) {
            journal.destroyed(in.id);
        }
    }

    /** Cancels every unfinished task of {@code in}; returns how many. */
    private int cancel(Instance in, String reason) {
        long before = in.cancelled; // tasks waiting for a cancelled one are cancelled with it: all counted
        Execution cancelled = Execution.of(TaskStatus.CANCELLED, reason, nowMicros);
        ledger.dequeueAll(in, t -> complete(t, "", cancelled));
        cancelWaiting(in, cancelled);
        if (in.running > 0) {
            for (ExecutorState e : pool.all()) {
                List<Task> mine = null;
                for (Task t : e.runningTasks()) {
                    if (t.instance == in) {
                        (mine == null ? mine = new ArrayList<>() : mine).add(t);
                    }
                }
                if (mine == null) {
                    continue;
                }
                long[] taskIds = new long[mine.size()];
                for (int i = 0; i < taskIds.length; i++) {
                    Task t = mine.get(i);
                    taskIds[i] = t.id;
                    ledger.unassign(t);
                    complete(t, e.id, cancelled);
                }
                // the executor kills them and returns their credits with RESULTs we will ignore
                outbox.send(e.link, new Message.Cancel(taskIds));
            }
        }
        return (int) (in.cancelled - before);
    }

    /** The task's final outcome: counted, journaled, delivered (and kept until acknowledged). */
    private void complete(Task t, String executorId, Execution x) {
        Instance in = t.instance;
        ledger.finished(t, x);
        if (t.rerun && !x.succeeded()) { // the dispatcher's own run: its keys are settled below, nothing is delivered
            log.warn("task {} run again to make its lost temporary outputs did not succeed: {} {}",
                    Long.toUnsignedString(t.clientTaskId), x.status(), LogSafe.text(x.detail()));
        }
        if (t.readsTemporary) {
            in.dataflow.read(t, -1, intermediates::unneeded);
        }
        if (!in.gone && !t.rerun) {
            Message.DeliveredResult r = new Message.DeliveredResult(t.clientTaskId,
                    in.retainsResults() ? in.takeSeq() : 0, t.attempt, executorId, t.submittedMicros,
                    t.dispatchedMicros, nowMicros, x);
            if (in.retainsResults()) {
                journal.completed(in.id, r);
                instances.retain(in, r);
            }
            if (in.owner != null) {
                outbox.deliver(in, r);
            }
        }
        if (in.dataflow != null && (t.outputIds != null || t.name != null)) {
            // after its own result: a producer's result comes before what it does to its dependants
            producers.add(t);
            producerResults.add(x);
            if (!cascading) {
                cascade();
            }
        }
    }

    // ---- dataflow: what a producer's result does to the tasks waiting for it --------------

    /** Producers whose results must still reach their subscribers: a worklist, not recursion (chains are long). */
    private final java.util.ArrayDeque<Task> producers = new java.util.ArrayDeque<>();
    private final java.util.ArrayDeque<Execution> producerResults = new java.util.ArrayDeque<>();
    private boolean cascading;

    /**
     * Hands each finished producer's keys to their subscribers: a success releases those that miss
     * nothing more to the queue; a failure ends them DEPENDENCY_FAILED (naming the task that failed
     * first upstream), a cancellation CANCELLED, and their own keys fail in turn. Each subscriber is
     * touched once per key: O(dependants).
     */
    private void cascade() {
        cascading = true;
        try {
            Task p;
            while ((p = producers.poll()) != null) {
                Execution x = producerResults.poll();
                boolean ok = x.succeeded();
                boolean cancelled = x.status() == TaskStatus.CANCELLED;
                DataCodec.Dependency upstream = x.status() == TaskStatus.DEPENDENCY_FAILED ? DataCodec.dependencyOf(x) : null;
                long first = upstream != null ? upstream.producer() : p.clientTaskId;
                Instance in = p.instance;
                if (in.retainsResults() && !in.gone && !p.rerun) {
                    journal.produced(in.id, p.outputIds, p.name, ok, first);
                }
                in.dataflow.produced(p, ok, first, key -> {
                    Task[] subscribers = key.take();
                    if (subscribers == null) {
                        return;
                    }
                    for (Task w : subscribers) {
                        if (w == null) {
                            break;
                        }
                        if (w.finished) {
                            continue; // failed meanwhile by another key it needed
                        }
                        if (ok) {
                            ledger.produced(w);
                        } else {
                            ledger.leaveWaiting(w);
                            complete(w, "", cancelled ? Execution.of(TaskStatus.CANCELLED, "not run: a task it "
                                    + "needs was cancelled", nowMicros) : dependencyExecution(key, first));
                        }
                    }
                });
            }
        } finally {
            cascading = false;
        }
    }

    /** Ends every waiting task of the instance (cancelled with it, or halted: they never started). */
    private void cancelWaiting(Instance in, Execution cancelled) {
        Dataflow df = in.dataflow;
        while (df != null && df.waitingTasks() > 0) {
            Task t = df.firstWaiting();
            ledger.leaveWaiting(t);
            complete(t, "", cancelled);
        }
    }

    // ---- status ----------------------------------------------------------------------------

    private void status(Link link, Message.StatusRequest req) {
        refreshClock();
        instances.client(link);
        if (req.instanceId() == 0) {
            outbox.send(link, new Message.Status(req.requestId(), renderer.dispatcher(snapshot())));
            return;
        }
        Instance in = ownedInstance(link, req.requestId(), req.instanceId());
        if (in != null) {
            outbox.send(link, new Message.Status(req.requestId(), renderer.instance(StatusBuilder.row(in, tickMicros))));
        }
    }

    /** The state at this moment, as an immutable copy that can be rendered on any thread. */
    public StatusSnapshot snapshot() {
        refreshClock();
        return statusBuilder.snapshot(tickMicros, startedTick, data);
    }

    /** Completes the future once at least {@code count} executors are registered. */
    public void whenExecutors(int count, CompletableFuture<Void> future) {
        pool.whenRegistered(count, future);
    }

    /**
     * Stops accepting new instances and tasks and freezes the state: connections that close from
     * now on change nothing (a restart from the journal re-queues what was running).
     */
    public void shutDown(boolean releaseExecutors) {
        shuttingDown = true;
        if (releaseExecutors) {
            // they leave instead of dialling a dispatcher that is not coming back
            for (ExecutorState e : pool.all()) {
                e.link.close(Message.ErrorMessage.of(0, ErrorCode.SHUTTING_DOWN, "the dispatcher is shutting down"));
            }
        }
    }

    // ---- time ------------------------------------------------------------------------------

    /**
     * Called by the loop at least every 100 ms: dispatch timeouts, the end of suspensions and of
     * leases, and journal compaction.
     */
    public void onTimer() {
        refreshClock();
        for (Task t : ledger.expired(tickMicros)) {
            ExecutorState e = t.executor;
            ledger.unassign(t);
            outbox.send(e.link, new Message.Cancel(new long[]{t.id}));
            recordOutcome(e, true);
            if (t.canRetry()) {
                retry(t, e, "no result within " + t.dispatchTimeoutMillis + " ms");
            } else {
                complete(t, e.id, Execution.of(TaskStatus.TIMEOUT, "no result from executor " + e.id + " within the "
                        + "dispatch timeout of " + t.dispatchTimeoutMillis + " ms (no retries left)", nowMicros));
            }
        }
        pool.resumeDue(tickMicros);
        for (Instance in : instances.expired(tickMicros)) {
            int n = cancel(in, "lease expired");
            Link owner = in.owner;
            outbox.drop(in);
            forget(in);
            if (owner != null) { // an idle owner (WS): told, with request id 0, that the instance is gone
                outbox.send(owner, new Message.Destroyed(0, in.id, n));
            }
            log.info("instance {} destroyed: its lease of {} s ran out with no client attached ({} tasks "
                    + "cancelled)", LogSafe.instance(in.id), in.leaseMicros / 1_000_000, n);
        }
        if (journal.wantsCompaction()) {
            journal.compact(recovery::writeTo);
        }
    }

    // ---- the round -------------------------------------------------------------------------

    /** Ends a batch of events: one scheduling round, then one write per link after the journal commit. */
    public void endBatch() {
        memory.check(ledger.queuedBytes() + ledger.waitingBytes(), ledger.runningBytes(), instances.retainedBytes());
        if (!ledger.isEmpty() && pool.totalCredits() > 0 && !memory.holdingDispatch()) {
            refreshClock();
            Task head;
            while ((head = ledger.head()) != null && head.sized() && refuseIfTooLarge(head)) {
                // an executor that could hold it left since it was queued
            }
            if (ledger.window() != null) {
                ledger.window().fill();
            }
            round.begin();
            policy.schedule(round);
        }
        if (multicast != null) {
            refreshClock();
            multicast.step(tickMicros);
        }
        outbox.endRound();
        outbox.commit(journal);
    }

    /**
     * Ends a queued task that no registered executor could ever run (more cores, memory or disk than
     * the largest has), naming what it needs; true if it did. With no executor registered it waits: a
     * provisioner may be starting some.
     */
    private boolean refuseIfTooLarge(Task t) {
        if (pool.size() == 0 || pool.someoneCouldHold(t)) {
            return false;
        }
        ledger.drop(t);
        complete(t, "", Execution.of(TaskStatus.REJECTED, Execution.PERMANENT, "not run: it needs " + t.cores
                + (t.cores == 1 ? " core" : " cores") + (t.memoryMiB > 0 ? ", " + t.memoryMiB + " MiB of memory" : "")
                + (t.diskMiB > 0 ? ", " + t.diskMiB + " MiB of disk" : "") + " of one executor, and the registered executors have at most " + pool.largest(), nowMicros));
        return true;
    }

    /** The round's assignment (see {@link Round#assign}): queue to executor, credits used, into its bundle. */
    void assign(Task t, ExecutorState e) {
        pool.useCredits(e, t.cores);
        ledger.assign(t, e, nowMicros, tickMicros);
        outbox.dispatch(e, new Message.DispatchedTask(t.id, t.attempt, t.spec,
                t.inputIds == null && t.temporary == null ? ExtField.NONE : dataExt(t, e)));
    }

    /**
     * Location hints for a data-aware policy; otherwise the order to read straight from the store
     * and cache nothing (then temporary outputs are written through too).
     */
    private List<ExtField> dataExt(Task t, ExecutorState target) {
        if (ledger.window() == null) {
            return BYPASS;
        }
        if (t.inputIds == null) {
            return ExtField.NONE;
        }
        Map<String, List<String>> hints = new LinkedHashMap<>();
        for (String id : t.inputIds) {
            List<String> peers = pool.index().peers(id, target, 3);
            if (!peers.isEmpty()) {
                hints.put(id, peers);
            }
        }
        return hints.isEmpty() ? ExtField.NONE : List.of(new ExtField(ExtTags.HINTS, DataCodec.encodeHints(hints)));
    }

    /** Reads the clock once per event rather than once per task. */
    private void refreshClock() {
        nowMicros = clock.nowMicros();
        tickMicros = clock.tickMicros();
    }

    long nowMicros() {
        return nowMicros;
    }

    /** CACHE_UPDATE: what an executor's cache gained and lost (or, when full, all it holds). */
    private void cacheUpdate(Link link, Message.CacheUpdate update) {
        ExecutorState e = executor(link, "CACHE_UPDATE");
        if (e == null) {
            return;
        }
        if (pool.cacheUpdate(e, update) && ledger.window() != null) {
            ledger.window().replaceAll(e); // tasks waiting for it may wait for data it no longer has
        }
        if (multicast != null && multicast.active() > 0) {
            for (Message.CachedObject o : update.added()) {
                multicast.arrived(e, o.id());
            }
        }
    }

    // ---- read-only views for tests and status ----------------------------------------------

    public int queuedCount() {
        return ledger.queued();
    }

    /** Tasks waiting for what other tasks produce. */
    public int waitingCount() {
        return ledger.waiting();
    }

    public int runningCount() {
        return ledger.running();
    }

    public int executorCount() {
        return pool.size();
    }

    public int instanceCount() {
        return instances.size();
    }

    public long staleResults() {
        return staleResults;
    }

    public long retried() {
        return ledger.retried();
    }

    /** Whether new bundles are refused with BUSY (over the memory budget). */
    public boolean refusingBundles() {
        return memory.refusing();
    }

    /** Whether dispatching waits for clients to acknowledge results. */
    public boolean holdingDispatch() {
        return memory.holdingDispatch();
    }

    /** Dispatched tasks with a deadline (a finished task has none: it must not be kept reachable). */
    int pendingDeadlines() {
        return ledger.deadlines();
    }

    public boolean suspended(String executorId) {
        ExecutorState e = pool.byId(executorId);
        return e != null && e.suspended();
    }

    /** Checks the counters against what they count (see {@link Invariants}); throws if they disagree. */
    public void checkInvariants() {
        Invariants.check(ledger, pool, instances);
    }
}
