package io.falkon.dispatcher.core;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.falkon.dispatcher.policy.DispatchPolicy;
import io.falkon.dispatcher.policy.ExecutorView;
import io.falkon.dispatcher.policy.QueuedTask;
import io.falkon.dispatcher.policy.SchedulingRound;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Execution;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpecCodec;
import io.falkon.protocol.TaskStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The dispatcher's state machine: instances, the wait queue, executors and their credits. It is
 * driven by one thread (see {@link SchedulerLoop}), takes decoded messages as method calls, and
 * answers by enqueueing messages on {@link Link}s; it does no I/O and reads time only from its
 * {@link Clock}, so tests drive it directly with fake links and a fake clock.
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
public final class Scheduler implements SchedulingRound {
    private static final Logger log = LoggerFactory.getLogger(Scheduler.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private final Map<String, java.util.function.Supplier<String>> statusSections = new java.util.LinkedHashMap<>();
    private static final Runnable NOTHING_TO_SEND = () -> {
    };
    /** Most slots, and most credits, one executor may hold: far beyond any real node, far below overflow. */
    static final int MAX_CREDITS = 1 << 24;

    private final DispatchPolicy policy;
    private final Clock clock;
    private final String dispatcherId;
    private final SchedulerConfig config;
    private final Journal journal;
    private final long startedMicros;
    private final Random ids = new SecureRandom();

    private final TaskQueue queue = new TaskQueue();
    private final Map<Link, ExecutorState> executorsByLink = new LinkedHashMap<>();
    private final Map<String, ExecutorState> executorsById = new HashMap<>();
    private final Map<Long, Instance> instances = new HashMap<>();
    private final Map<Link, List<Instance>> instancesByOwner = new HashMap<>();
    private final Set<Link> clients = new HashSet<>();
    /** Executors that have credits, in round-robin order (entries without credit are dropped lazily). */
    private final ArrayDeque<ExecutorState> ring = new ArrayDeque<>();
    private final List<ExecutorState> bundled = new ArrayList<>();
    private final List<Instance> delivering = new ArrayList<>();
    private final List<Link> dirty = new ArrayList<>();
    private final List<ExecutorWaiter> executorWaiters = new ArrayList<>();
    private final PriorityQueue<Deadline> deadlines = new PriorityQueue<>();
    private final CacheIndex index = new CacheIndex();
    /** The scheduling window of a data-aware policy; null for one that is not. */
    private final Window window;

    private long nextTaskId = 1;
    /** Credits of executors that may get work (not suspended). */
    private int totalCredits;
    private int totalSlots;
    private int running;
    private long completed;
    private long succeeded;
    private long retried;
    private long staleResults;
    private long queuedBytes;
    private long retainedBytes;
    private boolean readingPaused;
    private long pauses;
    private io.falkon.protocol.DataStats data = io.falkon.protocol.DataStats.ZERO;
    private boolean shuttingDown;
    private long nowMicros;

    private record ExecutorWaiter(int count, CompletableFuture<Void> future) {
    }

    /** When a dispatch of {@code task} (attempt {@code attempt}) is presumed lost. */
    private record Deadline(long atMicros, Task task, int attempt) implements Comparable<Deadline> {
        @Override
        public int compareTo(Deadline o) {
            return Long.compare(atMicros, o.atMicros);
        }
    }

    public Scheduler(DispatchPolicy policy, Clock clock, String dispatcherId) {
        this(policy, clock, dispatcherId, SchedulerConfig.defaults(), Journal.NONE);
    }

    public Scheduler(DispatchPolicy policy, Clock clock, String dispatcherId, SchedulerConfig config, Journal journal) {
        this.policy = policy;
        this.clock = clock;
        this.dispatcherId = dispatcherId;
        this.config = config;
        this.journal = journal;
        this.startedMicros = clock.nowMicros();
        this.nowMicros = startedMicros;
        this.window = policy.dataAware() ? new Window(index, windowSize(0)) : null;
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

    // ---- sending ---------------------------------------------------------------------------

    private void send(Link link, Message m) {
        if (link.enqueue(m)) {
            dirty.add(link);
        }
    }

    private void replyError(Link link, long requestId, ErrorCode code, String message) {
        send(link, Message.ErrorMessage.of(requestId, code, message));
    }

    /** Answers a request the transport refused before it got here (e.g. an invalid task spec). */
    public void rejectRequest(Link link, long requestId, ErrorCode code, String message) {
        clients.add(link);
        replyError(link, requestId, code, message);
    }

    // ---- executors -------------------------------------------------------------------------

    /**
     * A connection completed its handshake as an executor and sent REGISTER. An executor that
     * registers again under an id still connected (it reconnected before its old connection was
     * noticed dead) replaces the old connection, whose tasks are handled as lost.
     */
    public void registerExecutor(Link link, Message.Register reg) {
        refreshClock();
        if (reg.slots() < 1 || reg.slots() > MAX_CREDITS) {
            link.close(Message.ErrorMessage.of(0, ErrorCode.MALFORMED,
                    "REGISTER.slots: must be 1.." + MAX_CREDITS + ", got " + reg.slots()));
            return;
        }
        if (reg.executorId().isEmpty()) {
            link.close(Message.ErrorMessage.of(0, ErrorCode.MALFORMED, "REGISTER.executorId: empty"));
            return;
        }
        ExecutorState old = executorsById.get(reg.executorId());
        if (old != null) {
            log.warn("executor {} registered again from {}; dropping its old connection from {}", reg.executorId(),
                    link.remote(), old.link.remote());
            old.link.close(Message.ErrorMessage.of(0, ErrorCode.DUPLICATE_EXECUTOR,
                    "executor id '" + reg.executorId() + "' registered again on another connection"));
            executorDisconnected(old.link);
        }
        ExecutorState e = new ExecutorState(link, reg, nowMicros, config.suspendWindowMillis() * 1000);
        executorsByLink.put(link, e);
        executorsById.put(e.id, e);
        totalSlots += e.slots;
        if (window != null) {
            window.resize(windowSize(executorsByLink.size()));
        }
        log.info("executor {} registered from {} ({} slots{})", e.id, link.remote(), e.slots,
                e.noExec ? ", NO-EXEC benchmark mode" : "");
        Iterator<ExecutorWaiter> it = executorWaiters.iterator();
        while (it.hasNext()) {
            ExecutorWaiter w = it.next();
            if (executorsById.size() >= w.count) {
                w.future.complete(null);
                it.remove();
            }
        }
    }

    /** CREDIT from an executor. */
    public void credit(Link link, int credits) {
        ExecutorState e = executor(link, "CREDIT");
        if (e != null) {
            addCredits(e, credits);
        }
    }

    private ExecutorState executor(Link link, String what) {
        ExecutorState e = executorsByLink.get(link);
        if (e == null) {
            link.close(Message.ErrorMessage.of(0, ErrorCode.UNEXPECTED_MESSAGE, what + " before REGISTER"));
        }
        return e;
    }

    private void addCredits(ExecutorState e, int credits) {
        if (credits <= 0) {
            return;
        }
        if (credits > MAX_CREDITS - e.credits) {
            e.link.close(Message.ErrorMessage.of(0, ErrorCode.MALFORMED, "credits: " + credits + " more would "
                    + "give executor " + e.id + " over " + MAX_CREDITS));
            executorDisconnected(e.link);
            return;
        }
        e.credits += credits;
        if (e.eligible()) {
            totalCredits += credits;
            enterRing(e);
        }
    }

    private void enterRing(ExecutorState e) {
        if (!e.inRing && e.credits > 0) {
            e.inRing = true;
            ring.addLast(e);
        }
    }

    /** RESULT from an executor: completed tasks plus piggy-backed credits. */
    public void results(Link link, Message.Result result) {
        ExecutorState e = executor(link, "RESULT");
        if (e == null) {
            return;
        }
        refreshClock();
        addCredits(e, result.credits());
        List<Message.TaskResult> list = result.results();
        for (int i = 0, n = list.size(); i < n; i++) {
            Message.TaskResult r = list.get(i);
            Task t = e.tasks.get(r.taskId());
            if (t == null || t.attempt != r.attempt()) {
                // cancelled meanwhile, or an answer for an attempt we no longer wait for
                staleResults++;
                continue;
            }
            e.tasks.remove(r.taskId());
            e.completed++;
            running--;
            t.instance.running--;
            t.executor = null;
            Execution x = r.execution();
            if (x.status() != TaskStatus.CANCELLED) {
                recordOutcome(e, !x.succeeded());
            }
            if (t.inputIds != null) {
                data = data.plus(io.falkon.protocol.DataCodec.statsOf(x));
            }
            if (x.status().retryable() && t.canRetry()) {
                t.failedOn(e);
                requeue(t, e.id + ": " + x.status() + (x.detail().isEmpty() ? "" : " (" + x.detail() + ")"));
            } else {
                complete(t, e.id, x);
            }
        }
    }

    /** An executor's connection closed (or it stopped heartbeating). Its running tasks go elsewhere. */
    public void executorDisconnected(Link link) {
        if (shuttingDown) {
            return; // the state is frozen for the journal; a restart re-queues what was running
        }
        ExecutorState e = executorsByLink.remove(link);
        if (e == null) {
            return;
        }
        refreshClock();
        executorsById.remove(e.id, e);
        if (e.eligible()) {
            totalCredits -= e.credits;
        }
        e.alive = false;
        totalSlots -= e.slots;
        e.credits = 0;
        index.removeAll(e);
        if (window != null) {
            window.executorGone(e);
            window.resize(windowSize(executorsByLink.size()));
        }
        int lost = e.tasks.size();
        int requeued = 0;
        for (Task t : e.tasks.values()) {
            running--;
            t.instance.running--;
            t.executor = null;
            if (t.canRetry()) {
                t.failedOn(e);
                requeue(t, "executor " + e.id + " lost");
                requeued++;
            } else {
                complete(t, e.id, Execution.of(TaskStatus.EXECUTOR_LOST,
                        "executor " + e.id + " disconnected while running the task (attempt " + (t.attempt + 1)
                                + ", no retries left)", nowMicros));
            }
        }
        e.tasks.clear();
        log.info("executor {} disconnected ({} running tasks: {} re-queued, {} reported lost)", e.id, lost, requeued,
                lost - requeued);
    }

    private void requeue(Task t, String why) {
        t.attempt++;
        retried++;
        queue.addFirst(t); // ahead of new work: it has waited already
        if (window != null) {
            window.prepended(t);
        }
        t.instance.queued++;
        queuedBytes += t.footprint();
        log.debug("task {} re-queued for attempt {}: {}", t.id, t.attempt + 1, why);
    }

    private void recordOutcome(ExecutorState e, boolean failed) {
        e.outcomes.record(nowMicros, failed);
        if (!failed) {
            return;
        }
        e.failures++;
        if (config.suspendAfterFailures() <= 0 || e.suspended()) {
            return;
        }
        int f = e.outcomes.failures(nowMicros);
        int total = e.outcomes.total(nowMicros);
        if (f >= config.suspendAfterFailures() && f >= config.suspendFailureRate() * total && othersSucceed(e)) {
            suspend(e, f, total);
        }
    }

    /** Whether another working executor has succeeded within the window: the failures are this node's. */
    private boolean othersSucceed(ExecutorState failing) {
        long since = nowMicros - config.suspendWindowMillis() * 1000;
        for (ExecutorState x : executorsByLink.values()) {
            if (x != failing && x.eligible() && x.outcomes.lastSuccessMicros >= since) {
                return true;
            }
        }
        return false;
    }

    private void suspend(ExecutorState e, int failures, int total) {
        if (e.eligible()) {
            totalCredits -= e.credits;
        }
        e.suspendedUntilMicros = nowMicros + config.suspendForMillis() * 1000;
        e.suspensions++;
        if (window != null) {
            window.executorGone(e);
        }
        log.warn("executor {} suspended for {} s: {} of its last {} outcomes within {} s failed while other "
                        + "executors succeed", e.id, config.suspendForMillis() / 1000, failures, total,
                config.suspendWindowMillis() / 1000);
    }

    private void resume(ExecutorState e) {
        e.suspendedUntilMicros = 0;
        e.outcomes.clear();
        totalCredits += e.credits;
        enterRing(e);
        log.info("executor {} back from suspension", e.id);
    }

    // ---- clients ---------------------------------------------------------------------------

    public void createInstance(Link link, Message.CreateInstance req) {
        refreshClock();
        clients.add(link);
        if (shuttingDown) {
            replyError(link, req.requestId(), ErrorCode.SHUTTING_DOWN, "the dispatcher is shutting down");
            return;
        }
        long id;
        do {
            id = ids.nextLong();
        } while (id == 0 || instances.containsKey(id));
        Instance in = new Instance(id, req.clientName(), link, req.leaseSeconds(), nowMicros);
        instances.put(id, in);
        instancesByOwner.computeIfAbsent(link, k -> new ArrayList<>(1)).add(in);
        if (in.retainsResults()) {
            journal.instanceCreated(id, in.name, req.leaseSeconds(), nowMicros, -1);
        }
        log.debug("instance {} created for '{}' at {}", hex(id), req.clientName(), link.remote());
        send(link, new Message.InstanceCreated(req.requestId(), id));
    }

    private static String hex(long id) {
        return Long.toUnsignedString(id, 16);
    }

    private Instance ownedInstance(Link link, long requestId, long instanceId) {
        clients.add(link);
        Instance in = instances.get(instanceId);
        if (in == null || in.owner != link) {
            replyError(link, requestId, ErrorCode.UNKNOWN_INSTANCE,
                    "no instance " + hex(instanceId) + " on this connection");
            return null;
        }
        return in;
    }

    /** SUBMIT whose task specs the transport has already validated; {@code scans} has one per task. */
    public void submit(Link link, Message.Submit req, TaskSpecCodec.Scan[] scans) {
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
        for (int i = 0, n = tasks.size(); i < n; i++) {
            Message.SubmittedTask s = tasks.get(i);
            accept(in, s.clientTaskId(), s.spec(), nowMicros, scans[i].retries(), scans[i].wallTimeMillis(),
                    scans[i].inputIds(), scans[i].inputSizes());
            if (in.retainsResults()) {
                journal.accepted(in.id, s.clientTaskId(), nowMicros, s.spec());
            }
        }
        send(link, new Message.Submitted(req.requestId(), in.id, tasks.size()));
    }

    private void accept(Instance in, long clientTaskId, byte[] spec, long submittedMicros, int retries,
                        long wallTimeMillis, String[] inputIds, long[] inputSizes) {
        long timeout = config.dispatchTimeoutMillis() > 0 ? config.dispatchTimeoutMillis()
                : wallTimeMillis > 0 ? wallTimeMillis + config.dispatchGraceMillis() : 0;
        Task t = new Task(nextTaskId++, in, clientTaskId, spec, submittedMicros,
                retries >= 0 ? retries : config.defaultRetries(), timeout, inputIds, inputSizes);
        queue.addLast(t);
        if (window != null) {
            window.appended(t);
        }
        queuedBytes += t.footprint();
        in.queued++;
        in.highestClientTaskId = Math.max(in.highestClientTaskId, clientTaskId);
    }

    public void destroy(Link link, Message.Destroy req) {
        Instance in = ownedInstance(link, req.requestId(), req.instanceId());
        if (in == null) {
            return;
        }
        refreshClock();
        int cancelled = cancel(in, "instance destroyed");
        flushOutbox(in);
        forget(in);
        send(link, new Message.Destroyed(req.requestId(), in.id, cancelled));
    }

    /**
     * ATTACH: the connection takes over an instance (typically its own, after reconnecting), and the
     * results delivered but not acknowledged are delivered again, after the ATTACHED reply.
     */
    public void attach(Link link, Message.Attach req) {
        clients.add(link);
        refreshClock();
        Instance in = instances.get(req.instanceId());
        if (in == null) {
            replyError(link, req.requestId(), ErrorCode.UNKNOWN_INSTANCE, "no instance " + hex(req.instanceId())
                    + " (destroyed, its lease ran out, or it was created without a lease)");
            return;
        }
        if (in.owner != null && in.owner != link) {
            List<Instance> owned = instancesByOwner.get(in.owner);
            if (owned != null) {
                owned.remove(in);
            }
            log.info("instance {} re-attached from {} (was {})", hex(in.id), link.remote(), in.owner.remote());
        }
        in.owner = link;
        in.detachedMicros = 0;
        List<Instance> owned = instancesByOwner.computeIfAbsent(link, k -> new ArrayList<>(1));
        if (!owned.contains(in)) {
            owned.add(in);
        }
        send(link, new Message.Attached(req.requestId(), in.id, in.highestClientTaskId, in.unacked.size()));
        if (!in.unacked.isEmpty()) {
            send(link, new Message.Deliver(in.id, new ArrayList<>(in.unacked)));
        }
        if (in.outbox != null) {
            in.outbox.clear(); // everything in it is in unacked and was just sent
        }
    }

    /** ACK: the client has all results up to {@code upToSeq}; they need not be kept any longer. */
    public void ack(Link link, Message.Ack ack) {
        Instance in = instances.get(ack.instanceId());
        if (in == null || in.owner != link) {
            return; // acknowledging what is gone changes nothing
        }
        boolean dropped = false;
        while (!in.unacked.isEmpty() && in.unacked.peekFirst().seq() <= ack.upToSeq()) {
            Message.DeliveredResult r = in.unacked.pollFirst();
            long bytes = Instance.footprint(r);
            in.unackedBytes -= bytes;
            retainedBytes -= bytes;
            dropped = true;
        }
        if (dropped) {
            journal.acked(in.id, ack.upToSeq());
        }
    }

    /**
     * A client's connection closed. Instances with a lease stay, detached, until it runs out (their
     * tasks keep running and their results are kept); the others are destroyed at once.
     */
    public void clientDisconnected(Link link) {
        clients.remove(link);
        if (shuttingDown) {
            return; // instances stay as journaled, for clients to re-attach after a restart
        }
        List<Instance> owned = instancesByOwner.remove(link);
        if (owned == null) {
            return;
        }
        refreshClock();
        for (Instance in : new ArrayList<>(owned)) {
            if (in.retainsResults()) {
                in.owner = null;
                in.detachedMicros = nowMicros;
                log.info("client {} disconnected: instance {} detached, kept for {} s", link.remote(), hex(in.id),
                        in.leaseMicros / 1_000_000);
                continue;
            }
            int n = cancel(in, "client disconnected");
            in.outbox = null;
            forget(in);
            if (n > 0) {
                log.info("client {} disconnected: instance {} destroyed, {} unfinished tasks cancelled",
                        link.remote(), hex(in.id), n);
            }
        }
    }

    private void forget(Instance in) {
        instances.remove(in.id);
        in.gone = true;
        retainedBytes -= in.unackedBytes;
        in.unacked.clear();
        in.unackedBytes = 0;
        if (in.retainsResults()) {
            journal.destroyed(in.id);
        }
        if (in.owner != null) {
            List<Instance> owned = instancesByOwner.get(in.owner);
            if (owned != null) {
                owned.remove(in);
                if (owned.isEmpty()) {
                    instancesByOwner.remove(in.owner);
                }
            }
        }
    }

    /** Cancels every unfinished task of {@code in}; returns how many. */
    private int cancel(Instance in, String reason) {
        int[] count = {0};
        Execution cancelled = Execution.of(TaskStatus.CANCELLED, reason, nowMicros);
        if (in.queued > 0) {
            queue.removeIf(t -> t.instance == in, t -> {
                if (window != null) {
                    window.removed(t);
                }
                in.queued--;
                queuedBytes -= t.footprint();
                count[0]++;
                complete(t, "", cancelled);
            });
        }
        if (in.running > 0) {
            for (ExecutorState e : executorsByLink.values()) {
                List<Task> mine = null;
                for (Task t : e.tasks.values()) {
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
                    e.tasks.remove(t.id);
                    running--;
                    in.running--;
                    t.executor = null;
                    count[0]++;
                    complete(t, e.id, cancelled);
                }
                // the executor kills them and returns their credits with RESULTs we will ignore
                send(e.link, new Message.Cancel(taskIds));
            }
        }
        in.cancelled += count[0];
        return count[0];
    }

    /** The task's final outcome: counted, journaled, delivered (and kept until acknowledged). */
    private void complete(Task t, String executorId, Execution x) {
        Instance in = t.instance;
        in.completed++;
        completed++;
        if (x.succeeded()) {
            in.succeeded++;
            succeeded++;
        }
        if (in.gone) {
            return;
        }
        Message.DeliveredResult r = new Message.DeliveredResult(t.clientTaskId,
                in.retainsResults() ? in.nextSeq++ : 0, t.attempt, executorId, t.submittedMicros,
                t.dispatchedMicros, nowMicros, x);
        if (in.retainsResults()) {
            journal.completed(in.id, r);
            in.unacked.addLast(r);
            long bytes = Instance.footprint(r);
            in.unackedBytes += bytes;
            retainedBytes += bytes;
        }
        if (in.owner != null) {
            in.addToOutbox(r, delivering);
        }
    }

    private void flushOutbox(Instance in) {
        if (in.outbox != null && !in.outbox.isEmpty() && in.owner != null) {
            send(in.owner, new Message.Deliver(in.id, in.outbox));
        }
        in.outbox = null;
        // it stays in 'delivering' until endBatch, which skips an empty outbox
    }

    public void status(Link link, Message.StatusRequest req) {
        refreshClock();
        clients.add(link);
        if (req.instanceId() == 0) {
            send(link, new Message.Status(req.requestId(), statusJson()));
            return;
        }
        Instance in = ownedInstance(link, req.requestId(), req.instanceId());
        if (in != null) {
            ObjectNode o = JSON.createObjectNode();
            o.put("instance", hex(in.id));
            o.put("name", in.name);
            o.put("queued", in.queued);
            o.put("running", in.running);
            o.put("completed", in.completed);
            o.put("succeeded", in.succeeded);
            o.put("failed", in.failed());
            o.put("cancelled", in.cancelled);
            o.put("unacknowledged", in.unacked.size());
            o.put("leaseSeconds", in.leaseMicros / 1_000_000);
            send(link, new Message.Status(req.requestId(), o.toString()));
        }
    }

    /** The dispatcher-wide status document (docs/protocol.md section 7). */
    public String statusJson() {
        refreshClock();
        ObjectNode o = JSON.createObjectNode();
        o.put("dispatcherId", dispatcherId);
        o.put("uptimeSeconds", (nowMicros - startedMicros) / 1e6);
        o.put("policy", policy.name());
        o.put("queued", queue.size());
        o.put("running", running);
        o.put("completed", completed);
        o.put("failed", completed - succeeded);
        o.put("retried", retried);
        o.put("instances", instances.size());
        o.put("detachedInstances", instances.values().stream().filter(i -> i.owner == null).count());
        ObjectNode ex = o.putObject("executors");
        ex.put("registered", executorsByLink.size());
        ex.put("suspended", executorsByLink.values().stream().filter(ExecutorState::suspended).count());
        ex.put("slots", totalSlots);
        ex.put("busySlots", running);
        ObjectNode dd = o.putObject("data");
        dd.put("localHits", data.localHits());
        dd.put("peerHits", data.peerHits());
        dd.put("misses", data.misses());
        dd.put("bytesLocal", data.bytesLocal());
        dd.put("bytesPeer", data.bytesPeer());
        dd.put("bytesStore", data.bytesStore());
        dd.put("indexedObjects", index.objects());
        if (window != null) {
            dd.put("window", window.size());
        }
        ObjectNode mem = o.putObject("memory");
        mem.put("queuedBytes", queuedBytes);
        mem.put("retainedResultBytes", retainedBytes);
        mem.put("budgetBytes", config.memoryBudgetBytes());
        mem.put("clientsPaused", readingPaused);
        ObjectNode jvm = o.putObject("jvm");
        Runtime rt = Runtime.getRuntime();
        jvm.put("heapUsedBytes", rt.totalMemory() - rt.freeMemory());
        jvm.put("heapMaxBytes", rt.maxMemory());
        jvm.put("heapLiveAfterLastGcBytes", liveAfterGc());
        ArrayNode list = o.putArray("executorList");
        for (ExecutorState e : executorsByLink.values()) {
            ObjectNode x = list.addObject();
            x.put("id", e.id);
            x.put("host", e.host);
            x.put("slots", e.slots);
            x.put("running", e.tasks.size());
            x.put("credits", e.credits);
            x.put("completed", e.completed);
            x.put("failures", e.failures);
            x.put("state", e.suspended() ? "suspended" : "active");
            if (e.suspended()) {
                x.put("suspendedSeconds", (e.suspendedUntilMicros - nowMicros) / 1e6);
            }
            x.put("suspensions", e.suspensions);
            x.put("noExec", e.noExec);
            x.put("cachedObjects", e.cached.size());
            x.put("connectedSeconds", (nowMicros - e.connectedMicros) / 1e6);
        }
        for (Map.Entry<String, java.util.function.Supplier<String>> section : statusSections.entrySet()) {
            try {
                o.set(section.getKey(), JSON.readTree(section.getValue().get()));
            } catch (java.io.IOException | RuntimeException failure) {
                o.put(section.getKey(), "unavailable: " + failure.getMessage());
            }
        }
        return o.toString();
    }

    /**
     * Adds a section to the status document, e.g. the provisioner's allocations. The supplier is
     * called on the scheduler thread, so it must return at once (a document kept up to date by its
     * owner, not one computed on demand).
     */
    public void statusSection(String name, java.util.function.Supplier<String> json) {
        statusSections.put(name, json);
    }

    /** Heap in use right after the last collection of each pool: an estimate of live data. */
    private static long liveAfterGc() {
        long sum = 0;
        for (java.lang.management.MemoryPoolMXBean pool : java.lang.management.ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == java.lang.management.MemoryType.HEAP && pool.getCollectionUsage() != null) {
                sum += pool.getCollectionUsage().getUsed();
            }
        }
        return sum;
    }

    /** Completes the future once at least {@code count} executors are registered. */
    public void whenExecutors(int count, CompletableFuture<Void> future) {
        if (executorsById.size() >= count) {
            future.complete(null);
        } else {
            executorWaiters.add(new ExecutorWaiter(count, future));
        }
    }

    /**
     * Stops accepting new instances and tasks and freezes the state: connections that close from
     * now on change nothing (a restart from the journal re-queues what was running).
     */
    public void shutDown(boolean releaseExecutors) {
        shuttingDown = true;
        if (releaseExecutors) {
            // they leave instead of dialling a dispatcher that is not coming back
            for (ExecutorState e : executorsByLink.values()) {
                e.link.close(Message.ErrorMessage.of(0, ErrorCode.SHUTTING_DOWN, "the dispatcher is shutting down"));
            }
        }
    }

    // ---- restoring from the journal (before the loop starts) -------------------------------

    /** Re-creates an instance from the journal; it starts detached, with a fresh lease. */
    public void restoreInstance(long id, String name, long leaseSeconds, long createdMicros) {
        refreshClock();
        Instance in = new Instance(id, name, null, leaseSeconds, createdMicros);
        in.detachedMicros = nowMicros;
        instances.put(id, in);
    }

    /** Re-queues an accepted task that had no final result (at-least-once: it may have run before). */
    public void restoreTask(long instanceId, long clientTaskId, long submittedMicros, byte[] spec) {
        Instance in = instances.get(instanceId);
        if (in == null) {
            return;
        }
        TaskSpecCodec.Scan scan = TaskSpecCodec.scan(spec);
        accept(in, clientTaskId, spec, submittedMicros, scan.retries(), scan.wallTimeMillis(), scan.inputIds(),
                scan.inputSizes());
    }

    /** Keeps a final result the client had not acknowledged, for redelivery when it re-attaches. */
    public void restoreResult(long instanceId, Message.DeliveredResult r) {
        Instance in = instances.get(instanceId);
        if (in == null) {
            return;
        }
        in.unacked.addLast(r);
        long bytes = Instance.footprint(r);
        in.unackedBytes += bytes;
        retainedBytes += bytes;
        in.nextSeq = Math.max(in.nextSeq, r.seq() + 1);
        in.completed++;
        completed++;
        if (r.execution().succeeded()) {
            in.succeeded++;
            succeeded++;
        }
    }

    /** Remembers the highest client task id an instance accepted, finished or not (for ATTACHED). */
    public void restoreHighestClientTaskId(long instanceId, long highestClientTaskId) {
        Instance in = instances.get(instanceId);
        if (in != null) {
            in.highestClientTaskId = Math.max(in.highestClientTaskId, highestClientTaskId);
        }
    }

    /** Restores the result sequence counter of an instance whose results were all acknowledged. */
    public void restoreNextSeq(long instanceId, long nextSeq) {
        Instance in = instances.get(instanceId);
        if (in != null) {
            in.nextSeq = Math.max(in.nextSeq, nextSeq);
        }
    }

    /** Writes the live state through {@code out}: what a compacted journal must hold. */
    public void snapshot(Journal out) {
        for (Instance in : instances.values()) {
            if (!in.retainsResults()) {
                continue;
            }
            out.instanceCreated(in.id, in.name, in.leaseMicros / 1_000_000, in.createdMicros, in.highestClientTaskId);
            if (in.nextSeq > 1 && in.unacked.isEmpty()) {
                out.acked(in.id, in.nextSeq - 1); // keeps the sequence counter
            }
            for (Message.DeliveredResult r : in.unacked) {
                out.completed(in.id, r);
            }
        }
        for (Task t = queue.head(); t != null; t = t.next) {
            if (t.instance.retainsResults()) {
                out.accepted(t.instance.id, t.clientTaskId, t.submittedMicros, t.spec);
            }
        }
        for (ExecutorState e : executorsByLink.values()) {
            for (Task t : e.tasks.values()) {
                if (t.instance.retainsResults()) {
                    out.accepted(t.instance.id, t.clientTaskId, t.submittedMicros, t.spec);
                }
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
        Deadline d;
        while ((d = deadlines.peek()) != null && d.atMicros <= nowMicros) {
            deadlines.poll();
            Task t = d.task;
            if (t.executor == null || t.attempt != d.attempt) {
                continue; // finished or re-dispatched since
            }
            ExecutorState e = t.executor;
            e.tasks.remove(t.id);
            running--;
            t.instance.running--;
            t.executor = null;
            send(e.link, new Message.Cancel(new long[]{t.id}));
            recordOutcome(e, true);
            if (t.canRetry()) {
                t.failedOn(e);
                requeue(t, "no result from " + e.id + " within " + t.dispatchTimeoutMillis + " ms");
            } else {
                complete(t, e.id, Execution.of(TaskStatus.TIMEOUT, "no result from executor " + e.id + " within the "
                        + "dispatch timeout of " + t.dispatchTimeoutMillis + " ms (no retries left)", nowMicros));
            }
        }
        for (ExecutorState e : executorsByLink.values()) {
            if (e.suspended() && e.suspendedUntilMicros <= nowMicros) {
                resume(e);
            }
        }
        List<Instance> expired = null;
        for (Instance in : instances.values()) {
            if (in.owner == null && in.detachedMicros + in.leaseMicros <= nowMicros) {
                (expired == null ? expired = new ArrayList<>() : expired).add(in);
            }
        }
        if (expired != null) {
            for (Instance in : expired) {
                int n = cancel(in, "lease expired");
                forget(in);
                log.info("instance {} destroyed: its lease of {} s ran out with no client attached ({} tasks "
                        + "cancelled)", hex(in.id), in.leaseMicros / 1_000_000, n);
            }
        }
        if (journal.wantsCompaction()) {
            journal.compact(this::snapshot);
        }
    }

    // ---- the round -------------------------------------------------------------------------

    /** Ends a batch of events: one scheduling round, then one write per link after the journal commit. */
    public void endBatch() {
        if (!queue.isEmpty() && totalCredits > 0) {
            refreshClock();
            if (window != null) {
                window.fill();
            }
            policy.schedule(this);
        }
        for (int i = 0, n = bundled.size(); i < n; i++) {
            ExecutorState e = bundled.get(i);
            if (e.alive) {
                send(e.link, new Message.Dispatch(e.bundle));
            }
            e.bundle = null;
        }
        bundled.clear();
        for (int i = 0, n = delivering.size(); i < n; i++) {
            Instance in = delivering.get(i);
            in.inOutboxList = false;
            if (in.outbox != null && !in.outbox.isEmpty() && !in.gone && in.owner != null) {
                send(in.owner, new Message.Deliver(in.id, in.outbox));
            }
            in.outbox = null;
        }
        delivering.clear();
        checkMemory();
        if (dirty.isEmpty()) {
            journal.commit(NOTHING_TO_SEND); // records without replies (an ACK) still become durable
            return;
        }
        List<Runnable> sends = new ArrayList<>(dirty.size());
        for (int i = 0, n = dirty.size(); i < n; i++) {
            Runnable r = dirty.get(i).takeFlush();
            if (r != null) {
                sends.add(r);
            }
        }
        dirty.clear();
        journal.commit(() -> {
            for (int i = 0, n = sends.size(); i < n; i++) {
                sends.get(i).run();
            }
        });
    }

    /**
     * Backpressure: queued tasks over budget stop reading from clients; below 80% of it reading
     * resumes. Results awaiting acknowledgement are not counted: reading the clients' acks is what
     * frees them, so pausing for them would never end (a client's own in-flight bound limits them).
     */
    private void checkMemory() {
        long used = queuedBytes;
        if (!readingPaused && used > config.memoryBudgetBytes()) {
            readingPaused = true;
            pauses++;
            log.warn("{} MiB of queued tasks exceed the budget of {} MiB: pausing submissions from {} clients",
                    used >> 20, config.memoryBudgetBytes() >> 20, clients.size());
            clients.forEach(l -> l.setReading(false));
        } else if (readingPaused && used < config.memoryBudgetBytes() * 8 / 10) {
            readingPaused = false;
            log.info("memory back to {} MiB: resuming submissions", used >> 20);
            clients.forEach(l -> l.setReading(true));
        } else if (readingPaused) {
            clients.forEach(l -> l.setReading(false)); // includes clients that connected since
        }
    }

    /** Reads the clock once per event rather than once per task. */
    private void refreshClock() {
        nowMicros = clock.nowMicros();
    }

    @Override
    public long nowMicros() {
        return nowMicros;
    }

    @Override
    public QueuedTask head() {
        return queue.head();
    }

    @Override
    public int queued() {
        return queue.size();
    }

    @Override
    public Collection<? extends ExecutorView> executors() {
        return executorsByLink.values();
    }

    @Override
    public ExecutorView nextWithCredit() {
        ExecutorState e;
        while ((e = ring.pollFirst()) != null) {
            if (e.credits > 0 && e.eligible()) {
                ring.addLast(e);
                return e;
            }
            e.inRing = false;
        }
        return null;
    }

    @Override
    public int totalCredits() {
        return totalCredits;
    }

    @Override
    public boolean prefersElsewhere(QueuedTask task, ExecutorView executor) {
        if (!task.avoids(executor)) {
            return false;
        }
        for (ExecutorState x : executorsByLink.values()) {
            if (x.eligible() && !task.avoids(x)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void assign(QueuedTask queuedTask, ExecutorView executor) {
        Task t = (Task) queuedTask;
        ExecutorState e = (ExecutorState) executor;
        if (e.credits <= 0 || !e.eligible()) {
            throw new IllegalStateException("executor " + e.id + " has no credit or is suspended");
        }
        queue.remove(t);
        if (window != null) {
            window.removed(t);
            window.fill(); // the next queued task enters the window within this round
        }
        queuedBytes -= t.footprint();
        e.credits--;
        totalCredits--;
        t.executor = e;
        t.dispatchedMicros = nowMicros;
        e.tasks.put(t.id, t);
        running++;
        t.instance.queued--;
        t.instance.running++;
        if (t.dispatchTimeoutMillis > 0) {
            deadlines.add(new Deadline(nowMicros + t.dispatchTimeoutMillis * 1000, t, t.attempt));
        }
        if (e.bundle == null) {
            bundled.add(e);
        }
        e.addToBundle(new Message.DispatchedTask(t.id, t.attempt, t.spec, t.inputIds == null ? ExtField.NONE
                : dataExt(t, e)));
    }

    private static final List<ExtField> BYPASS = List.of(new ExtField(io.falkon.protocol.ExtTags.BYPASS_CACHE,
            new byte[]{1}));

    /** Location hints for a data-aware policy; otherwise the order to read straight from the store. */
    private List<ExtField> dataExt(Task t, ExecutorState target) {
        if (window == null) {
            return BYPASS;
        }
        Map<String, List<String>> hints = new LinkedHashMap<>();
        for (String id : t.inputIds) {
            List<String> peers = index.peers(id, target, 3);
            if (!peers.isEmpty()) {
                hints.put(id, peers);
            }
        }
        return hints.isEmpty() ? ExtField.NONE : List.of(new ExtField(io.falkon.protocol.ExtTags.HINTS,
                io.falkon.protocol.DataCodec.encodeHints(hints)));
    }

    // ---- data-aware views --------------------------------------------------------------------

    @Override
    public int window() {
        return window == null ? queue.size() : window.size();
    }

    @Override
    public double utilization() {
        return totalSlots == 0 ? 1.0 : (double) running / totalSlots;
    }

    @Override
    public long cachedBytes(QueuedTask task, ExecutorView executor) {
        Task t = (Task) task;
        return t.inputIds == null ? 0 : index.cachedBytes(t.inputIds, t.inputSizes, (ExecutorState) executor);
    }

    @Override
    public QueuedTask bestFor(ExecutorView executor) {
        if (window == null) {
            throw new IllegalStateException(policy.name() + " is not data-aware: it has no window");
        }
        return window.bestFor((ExecutorState) executor);
    }

    @Override
    public ExecutorView bestWithCredit(QueuedTask task) {
        Task t = (Task) task;
        return t.inputIds == null ? null : index.best(t.inputIds, t.inputSizes, x -> x.credits > 0 && x.eligible());
    }

    /** CACHE_UPDATE: what an executor's cache gained and lost (or, when full, all it holds). */
    public void cacheUpdate(Link link, Message.CacheUpdate update) {
        ExecutorState e = executor(link, "CACHE_UPDATE");
        if (e == null) {
            return;
        }
        if (update.full()) {
            index.removeAll(e);
        }
        for (String id : update.removed()) {
            index.remove(e, id);
        }
        for (Message.CachedObject o : update.added()) {
            index.add(e, o.id(), o.size());
        }
        if (window != null && (update.full() || !update.removed().isEmpty())) {
            window.replaceAll(e); // tasks waiting for it may wait for data it no longer has
        }
    }

    // ---- read-only views for tests and status ----------------------------------------------

    public int queuedCount() {
        return queue.size();
    }

    public int runningCount() {
        return running;
    }

    public int executorCount() {
        return executorsByLink.size();
    }

    public int instanceCount() {
        return instances.size();
    }

    public long staleResults() {
        return staleResults;
    }

    public long retried() {
        return retried;
    }

    public boolean clientsPaused() {
        return readingPaused;
    }

    public boolean suspended(String executorId) {
        ExecutorState e = executorsById.get(executorId);
        return e != null && e.suspended();
    }
}
