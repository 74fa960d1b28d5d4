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
import io.falkon.protocol.TaskStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;

/**
 * The dispatcher's state machine: instances, the wait queue, executors and their credits. It is
 * driven by one thread (see {@link SchedulerLoop}), takes decoded messages as method calls, and
 * answers by enqueueing messages on {@link Link}s; it does no I/O and reads time only from its
 * {@link Clock}, so tests drive it directly with fake links and a fake clock.
 *
 * <p>Events are handled in batches: the transport delivers any number of events, then calls
 * {@link #endBatch()}, which runs one scheduling round, sends each executor's assignments as one
 * DISPATCH bundle, each instance's new results as one DELIVER, and flushes every link once.
 */
public final class Scheduler implements SchedulingRound {
    private static final Logger log = LoggerFactory.getLogger(Scheduler.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final DispatchPolicy policy;
    private final Clock clock;
    private final String dispatcherId;
    private final long startedMicros;
    private final Random ids = new SecureRandom();

    private final TaskQueue queue = new TaskQueue();
    private final Map<Link, ExecutorState> executorsByLink = new LinkedHashMap<>();
    private final Map<String, ExecutorState> executorsById = new HashMap<>();
    private final Map<Long, Instance> instances = new HashMap<>();
    private final Map<Link, List<Instance>> instancesByOwner = new HashMap<>();
    /** Executors that have credits, in round-robin order (entries with 0 credits are dropped lazily). */
    private final ArrayDeque<ExecutorState> ring = new ArrayDeque<>();
    private final List<ExecutorState> bundled = new ArrayList<>();
    private final List<Instance> delivering = new ArrayList<>();
    private final List<Link> dirty = new ArrayList<>();
    private final List<ExecutorWaiter> executorWaiters = new ArrayList<>();

    private long nextTaskId = 1;
    private int totalCredits;
    private int totalSlots;
    private int running;
    private long completed;
    private long succeeded;
    private long staleResults;
    private boolean shuttingDown;
    private long nowMicros;

    private record ExecutorWaiter(int count, CompletableFuture<Void> future) {
    }

    public Scheduler(DispatchPolicy policy, Clock clock, String dispatcherId) {
        this.policy = policy;
        this.clock = clock;
        this.dispatcherId = dispatcherId;
        this.startedMicros = clock.nowMicros();
        this.nowMicros = startedMicros;
    }

    public String dispatcherId() {
        return dispatcherId;
    }

    public DispatchPolicy policy() {
        return policy;
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
        replyError(link, requestId, code, message);
    }

    // ---- executors -------------------------------------------------------------------------

    /** A connection completed its handshake as an executor and sent REGISTER. */
    public void registerExecutor(Link link, Message.Register reg) {
        tick();
        if (reg.slots() < 1) {
            link.close(Message.ErrorMessage.of(0, ErrorCode.MALFORMED,
                    "REGISTER.slots: must be at least 1, got " + reg.slots()));
            return;
        }
        if (reg.executorId().isEmpty()) {
            link.close(Message.ErrorMessage.of(0, ErrorCode.MALFORMED, "REGISTER.executorId: empty"));
            return;
        }
        if (executorsById.containsKey(reg.executorId())) {
            log.warn("executor {} from {} rejected: id already registered", reg.executorId(), link.remote());
            link.close(Message.ErrorMessage.of(0, ErrorCode.DUPLICATE_EXECUTOR,
                    "executor id '" + reg.executorId() + "' is already registered"));
            return;
        }
        ExecutorState e = new ExecutorState(link, reg, nowMicros);
        executorsByLink.put(link, e);
        executorsById.put(e.id, e);
        totalSlots += e.slots;
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
        e.credits += credits;
        totalCredits += credits;
        if (!e.inRing) {
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
        tick();
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
            complete(t, e.id, r.execution());
        }
    }

    /** An executor's connection closed. Its running tasks are reported as executor-lost. */
    public void executorDisconnected(Link link) {
        ExecutorState e = executorsByLink.remove(link);
        if (e == null) {
            return;
        }
        tick();
        executorsById.remove(e.id);
        e.alive = false;
        totalCredits -= e.credits;
        totalSlots -= e.slots;
        e.credits = 0;
        int lost = e.tasks.size();
        for (Task t : e.tasks.values()) {
            running--;
            t.instance.running--;
            complete(t, e.id, Execution.of(TaskStatus.EXECUTOR_LOST,
                    "executor " + e.id + " disconnected while running the task", nowMicros));
        }
        e.tasks.clear();
        log.info("executor {} disconnected ({} running tasks lost)", e.id, lost);
    }

    // ---- clients ---------------------------------------------------------------------------

    public void createInstance(Link link, Message.CreateInstance req) {
        tick();
        if (shuttingDown) {
            replyError(link, req.requestId(), ErrorCode.SHUTTING_DOWN, "the dispatcher is shutting down");
            return;
        }
        long id;
        do {
            id = ids.nextLong();
        } while (id == 0 || instances.containsKey(id));
        Instance in = new Instance(id, req.clientName(), link, nowMicros);
        instances.put(id, in);
        instancesByOwner.computeIfAbsent(link, k -> new ArrayList<>(1)).add(in);
        log.debug("instance {} created for '{}' at {}", Long.toUnsignedString(id, 16), req.clientName(),
                link.remote());
        send(link, new Message.InstanceCreated(req.requestId(), id));
    }

    private Instance ownedInstance(Link link, long requestId, long instanceId) {
        Instance in = instances.get(instanceId);
        if (in == null || in.owner != link) {
            replyError(link, requestId, ErrorCode.UNKNOWN_INSTANCE,
                    "no instance " + Long.toUnsignedString(instanceId, 16) + " on this connection");
            return null;
        }
        return in;
    }

    /** SUBMIT whose task specs the transport has already validated. */
    public void submit(Link link, Message.Submit req) {
        Instance in = ownedInstance(link, req.requestId(), req.instanceId());
        if (in == null) {
            return;
        }
        if (shuttingDown) {
            replyError(link, req.requestId(), ErrorCode.SHUTTING_DOWN, "the dispatcher is shutting down");
            return;
        }
        tick();
        List<Message.SubmittedTask> tasks = req.tasks();
        for (int i = 0, n = tasks.size(); i < n; i++) {
            Message.SubmittedTask s = tasks.get(i);
            queue.addLast(new Task(nextTaskId++, in, s.clientTaskId(), s.spec(), nowMicros));
        }
        in.queued += tasks.size();
        send(link, new Message.Submitted(req.requestId(), in.id, tasks.size()));
    }

    public void destroy(Link link, Message.Destroy req) {
        Instance in = ownedInstance(link, req.requestId(), req.instanceId());
        if (in == null) {
            return;
        }
        tick();
        int cancelled = cancel(in, "instance destroyed");
        flushOutbox(in);
        forget(in);
        send(link, new Message.Destroyed(req.requestId(), in.id, cancelled));
    }

    /** A client's connection closed: its instances are destroyed, their results have nowhere to go. */
    public void clientDisconnected(Link link) {
        List<Instance> owned = instancesByOwner.remove(link);
        if (owned == null) {
            return;
        }
        tick();
        for (Instance in : new ArrayList<>(owned)) {
            int n = cancel(in, "client disconnected");
            instances.remove(in.id);
            if (in.outbox != null) {
                in.outbox = null;
            }
            if (n > 0) {
                log.info("client {} disconnected: instance {} destroyed, {} unfinished tasks cancelled",
                        link.remote(), Long.toUnsignedString(in.id, 16), n);
            }
        }
    }

    private void forget(Instance in) {
        instances.remove(in.id);
        List<Instance> owned = instancesByOwner.get(in.owner);
        if (owned != null) {
            owned.remove(in);
            if (owned.isEmpty()) {
                instancesByOwner.remove(in.owner);
            }
        }
    }

    /** Cancels every unfinished task of {@code in}; returns how many. */
    private int cancel(Instance in, String reason) {
        int[] count = {0};
        Execution cancelled = Execution.of(TaskStatus.CANCELLED, reason, nowMicros);
        if (in.queued > 0) {
            queue.removeIf(t -> t.instance == in, t -> {
                in.queued--;
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
                long[] ids = new long[mine.size()];
                for (int i = 0; i < ids.length; i++) {
                    Task t = mine.get(i);
                    ids[i] = t.id;
                    e.tasks.remove(t.id);
                    running--;
                    in.running--;
                    count[0]++;
                    complete(t, e.id, cancelled);
                }
                // the executor kills them and returns their credits with RESULTs we will ignore
                send(e.link, new Message.Cancel(ids));
            }
        }
        in.cancelled += count[0];
        return count[0];
    }

    private void complete(Task t, String executorId, Execution x) {
        Instance in = t.instance;
        in.completed++;
        completed++;
        if (x.succeeded()) {
            in.succeeded++;
            succeeded++;
        }
        if (in.owner == null || !instances.containsKey(in.id)) {
            return;
        }
        if (in.outbox == null) {
            in.outbox = new ArrayList<>();
        }
        in.outbox.add(new Message.DeliveredResult(t.clientTaskId, t.attempt, executorId, t.submittedMicros,
                t.dispatchedMicros, nowMicros, x));
        if (!in.inOutboxList) {
            in.inOutboxList = true;
            delivering.add(in);
        }
    }

    private void flushOutbox(Instance in) {
        if (in.outbox != null && !in.outbox.isEmpty()) {
            send(in.owner, new Message.Deliver(in.id, in.outbox));
        }
        in.outbox = null;
        // it stays in 'delivering' until endBatch, which skips an empty outbox
    }

    public void status(Link link, Message.StatusRequest req) {
        tick();
        if (req.instanceId() == 0) {
            send(link, new Message.Status(req.requestId(), statusJson()));
            return;
        }
        Instance in = ownedInstance(link, req.requestId(), req.instanceId());
        if (in != null) {
            ObjectNode o = JSON.createObjectNode();
            o.put("instance", Long.toUnsignedString(in.id, 16));
            o.put("name", in.name);
            o.put("queued", in.queued);
            o.put("running", in.running);
            o.put("completed", in.completed);
            o.put("succeeded", in.succeeded);
            o.put("failed", in.failed());
            o.put("cancelled", in.cancelled);
            send(link, new Message.Status(req.requestId(), o.toString()));
        }
    }

    /** The dispatcher-wide status document (docs/protocol.md section 7). */
    public String statusJson() {
        tick();
        ObjectNode o = JSON.createObjectNode();
        o.put("dispatcherId", dispatcherId);
        o.put("uptimeSeconds", (nowMicros - startedMicros) / 1e6);
        o.put("policy", policy.name());
        o.put("queued", queue.size());
        o.put("running", running);
        o.put("completed", completed);
        o.put("failed", completed - succeeded);
        o.put("instances", instances.size());
        ObjectNode ex = o.putObject("executors");
        ex.put("registered", executorsByLink.size());
        ex.put("slots", totalSlots);
        ex.put("busySlots", running);
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
            x.put("noExec", e.noExec);
            x.put("connectedSeconds", (nowMicros - e.connectedMicros) / 1e6);
        }
        return o.toString();
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

    /** Stops accepting new instances and tasks; queued and running work is left as it is. */
    public void shutDown() {
        shuttingDown = true;
    }

    // ---- the round -------------------------------------------------------------------------

    /** Ends a batch of events: one scheduling round, then one write per link. */
    public void endBatch() {
        if (!queue.isEmpty() && totalCredits > 0) {
            tick();
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
            if (in.outbox != null && !in.outbox.isEmpty() && instances.containsKey(in.id)) {
                send(in.owner, new Message.Deliver(in.id, in.outbox));
            }
            in.outbox = null;
        }
        delivering.clear();
        for (int i = 0, n = dirty.size(); i < n; i++) {
            dirty.get(i).flush();
        }
        dirty.clear();
    }

    /** Reads the clock once per event rather than once per task. */
    private void tick() {
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
            if (e.credits > 0 && e.alive) {
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
    public void assign(QueuedTask queuedTask, ExecutorView executor) {
        Task t = (Task) queuedTask;
        ExecutorState e = (ExecutorState) executor;
        if (e.credits <= 0 || !e.alive) {
            throw new IllegalStateException("executor " + e.id + " has no credit");
        }
        queue.remove(t);
        e.credits--;
        totalCredits--;
        t.executor = e;
        t.dispatchedMicros = nowMicros;
        e.tasks.put(t.id, t);
        running++;
        t.instance.queued--;
        t.instance.running++;
        if (e.bundle == null) {
            bundled.add(e);
        }
        e.addToBundle(new Message.DispatchedTask(t.id, t.attempt, t.spec, ExtField.NONE));
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
}
