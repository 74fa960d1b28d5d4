package io.falkon.client;

import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.LogSafe;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskSpecCodec;
import io.falkon.protocol.time.Clock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * An isolated instance on a dispatcher (the factory/instance pattern): tasks submitted here run on
 * the dispatcher's executors and their results come back only here.
 *
 * <p>Submissions are bundled automatically: tasks submitted from any thread are queued and sent
 * in SUBMIT messages of up to {@link ClientOptions#bundleSize()} tasks by the connection's I/O
 * thread. At most {@link ClientOptions#maxInFlight()} tasks may be unfinished at once; beyond that
 * {@code submit} blocks until results come back (backpressure).
 *
 * <p>If the connection breaks, the client dials again (for {@link ClientOptions#reconnectFor()});
 * the instance then re-attaches, sends again the bundles the dispatcher had not accepted, and
 * receives the results it had not acknowledged. Each future still completes exactly once.
 *
 * <p>Futures complete on the connection's I/O thread: keep dependent actions short, or attach
 * them with the {@code ...Async} variants. {@link #close()} destroys the instance, cancelling
 * whatever is unfinished. Thread-safe.
 */
public final class Instance implements TaskInstance {
    private final Connection connection;
    private final long id;
    private final int bundleSize;
    private final int maxInFlight;
    private final Semaphore permits;
    private final Map<Long, CompletableFuture<TaskResult>> pending = new ConcurrentHashMap<>();
    /** Tasks submitted and not yet put in a bundle; they get their ids when they are (send order). */
    private final ConcurrentLinkedQueue<Queued> toSend = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queuedToSend = new AtomicInteger();
    private final AtomicBoolean flushScheduled = new AtomicBoolean();
    private final Unfinished outstanding = new Unfinished();
    private final Runnable onClose;
    private final boolean reconnects;
    /** The next client task id. I/O thread only: ids are given in the order tasks are sent. */
    private long nextTaskId;
    private final long nextTaskIdAtStart;
    private volatile Consumer<TaskResult> listener;
    private volatile BiConsumer<Long, FalkonException> refusedListener;
    private volatile FalkonException lost;
    private volatile boolean closed;
    /** False: results are received but not acknowledged, so the dispatcher keeps them for later clients. */
    private volatile boolean acknowledging = true;
    /** False between a reconnection and the ATTACHED reply: submissions wait. I/O thread only. */
    private boolean attached = true;
    /** Set for an instance taken over by id: results of tasks another client submitted go to the listener. */
    private final Set<Long> inherited;
    /**
     * SUBMIT bundles whose SUBMITTED has not come back, in send order, by their first id. I/O thread
     * only. After a reconnection each is sent again as it was: the dispatcher accepts a bundle whole
     * or not at all, and answers a bundle it already accepted as accepted without queueing it again.
     */
    private final LinkedHashMap<Long, List<Message.SubmittedTask>> unaccepted = new LinkedHashMap<>();
    /**
     * Bundles the dispatcher answered BUSY (over its memory budget), by first id: sent again, in
     * order, after a pause that grows while it stays busy; nothing newer is sent before them. I/O
     * thread only.
     */
    private final TreeMap<Long, List<Message.SubmittedTask>> refused = new TreeMap<>();
    private boolean resendScheduled;
    private int busyAnswers;
    /**
     * Set when a {@link DistributedInstance} took this instance's unfinished tasks to other dispatchers
     * ({@link #moveAway}): their ids, which the next re-attachment names so that the dispatcher
     * cancels them instead of running them again. Nothing is sent on this instance any more.
     * Written on the I/O thread.
     */
    private volatile long[] movedAway;
    private final String secret;

    /** A submitted task waiting for its bundle. */
    private record Queued(byte[] spec, CompletableFuture<TaskResult> future) {
    }

    /** Results the dispatcher had kept for this instance when it was taken over (sent right behind ATTACHED). */
    private final int redelivered;

    Instance(Connection connection, long id, String secret, ClientOptions options, Runnable onClose) {
        this(connection, id, secret, options, onClose, null, -1, 0);
    }

    /**
     * @param listener       set before any result can arrive (for an instance taken over by id)
     * @param highestTaskId  for an instance taken over by id: the highest task id it already has (new
     *                       tasks continue after it); -1 for a new instance
     * @param redelivered    for an instance taken over by id: how many kept results the dispatcher is sending
     */
    Instance(Connection connection, long id, String secret, ClientOptions options, Runnable onClose,
             Consumer<TaskResult> listener, long highestTaskId, int redelivered) {
        this.connection = connection;
        this.redelivered = redelivered;
        this.listener = listener;
        this.nextTaskId = highestTaskId + 1;
        this.nextTaskIdAtStart = nextTaskId;
        this.inherited = highestTaskId >= 0 || listener != null ? ConcurrentHashMap.newKeySet() : null;
        this.id = id;
        this.secret = secret;
        this.bundleSize = options.bundleSize();
        this.maxInFlight = options.maxInFlight();
        this.permits = new Semaphore(options.maxInFlight());
        this.onClose = onClose;
        this.reconnects = !options.reconnectFor().isZero();
        connection.route(id, new Sink());
    }

    /** The dispatcher's id for this instance. */
    public long id() {
        return id;
    }

    /**
     * What another client needs to take this instance over ({@link FalkonClient#attach(String,
     * Consumer)}): the id and the instance's secret, as {@code ID-SECRET} in hex. Treat it like a
     * password.
     */
    public String key() {
        return InstanceKey.format(id, secret);
    }

    /**
     * Submits one task; it travels in a bundle with others submitted around the same time. Blocks
     * while {@link ClientOptions#maxInFlight()} tasks are unfinished.
     *
     * @throws FalkonException if the instance is closed or its connection is lost
     */
    @Override
    public CompletableFuture<TaskResult> submit(TaskSpec spec) {
        CompletableFuture<TaskResult> f = enqueue(spec);
        scheduleFlush();
        return f;
    }

    /**
     * Submits tasks; returns one future per task, in the same order. Blocks while
     * {@link ClientOptions#maxInFlight()} tasks are unfinished.
     *
     * @throws FalkonException if the instance is closed or its connection is lost
     */
    public List<CompletableFuture<TaskResult>> submit(List<TaskSpec> specs) {
        List<CompletableFuture<TaskResult>> futures = new ArrayList<>(specs.size());
        int sinceFlush = 0;
        for (TaskSpec spec : specs) {
            futures.add(enqueue(spec));
            if (++sinceFlush == bundleSize) {
                scheduleFlush();
                sinceFlush = 0;
            }
        }
        scheduleFlush();
        return futures;
    }

    private CompletableFuture<TaskResult> enqueue(TaskSpec spec) {
        Objects.requireNonNull(spec, "spec");
        byte[] encoded = TaskSpecCodec.encode(spec);
        if (encoded.length + Connection.PER_TASK_OVERHEAD > connection.maxBundleBytes()) {
            // no message could carry it; the dispatcher's own per-task limit is usually far lower
            throw new IllegalArgumentException("task " + LogSafe.text(spec.argv().get(0)) + " is " + encoded.length
                    + " bytes encoded, more than one message to the dispatcher at " + connection.address()
                    + " can carry (" + connection.maxBundleBytes() + ")");
        }
        acquirePermit();
        CompletableFuture<TaskResult> f = new CompletableFuture<>();
        outstanding.add();
        toSend.add(new Queued(encoded, f));
        queuedToSend.incrementAndGet();
        if (lost != null || closed) {
            failUnsent(lost != null ? lost : new FalkonException(null, "instance closed before the task was sent"));
        }
        return f;
    }

    private void acquirePermit() {
        checkUsable();
        try {
            permits.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FalkonException("interrupted while waiting for room to submit", e);
        }
        if (lost != null || closed) {
            permits.release();
            checkUsable();
        }
    }

    private void checkUsable() {
        if (lost != null) {
            throw lost;
        }
        if (closed) {
            throw new FalkonException(null, "instance " + Long.toUnsignedString(id, 16) + " is closed");
        }
    }

    private void scheduleFlush() {
        if (flushScheduled.compareAndSet(false, true)) {
            connection.executor().execute(this::flush);
        }
    }

    /** On the I/O thread: sends everything queued, in bundles of at most bundleSize. */
    private void flush() {
        flushScheduled.set(false);
        if (!attached || !refused.isEmpty() || movedAway != null) {
            // re-attaching after a reconnection, or the dispatcher is busy: flushed once it answers
            return;
        }
        int budget = connection.maxBundleBytes();
        while (queuedToSend.get() > 0) {
            int n = Math.min(bundleSize, queuedToSend.get());
            List<Message.SubmittedTask> bundle = new ArrayList<>(n);
            long bytes = 0;
            Queued q;
            // cut by count and by bytes: a bundle never outgrows one message to the dispatcher
            while (bundle.size() < n && (q = toSend.peek()) != null
                    && (bundle.isEmpty() || bytes + q.spec().length + Connection.PER_TASK_OVERHEAD <= budget)) {
                toSend.poll(); // this thread alone takes from the queue: the head is still q
                bytes += q.spec().length + Connection.PER_TASK_OVERHEAD;
                long taskId = nextTaskId++; // ids in send order: a re-send covers exactly what was not accepted
                pending.put(taskId, q.future());
                bundle.add(new Message.SubmittedTask(taskId, q.spec()));
            }
            if (bundle.isEmpty()) {
                return;
            }
            queuedToSend.addAndGet(-bundle.size());
            send(bundle);
        }
    }

    /**
     * On the I/O thread: one SUBMIT; the bundle stays in {@code unaccepted} until SUBMITTED. The
     * connection completes the reply on its I/O thread (the {@link Connection} contract).
     */
    private void send(List<Message.SubmittedTask> bundle) {
        long first = bundle.get(0).clientTaskId();
        unaccepted.put(first, bundle);
        connection.submit(id, bundle).whenComplete((accepted, err) -> {
            if (err == null) {
                unaccepted.remove(first);
                busyAnswers = 0;
                return;
            }
            Throwable cause = err instanceof CompletionException && err.getCause() != null
                    ? err.getCause() : err;
            if (cause instanceof FalkonException fe && fe.code() == ErrorCode.BUSY && lost == null && !closed) {
                unaccepted.remove(first);
                refused.put(first, bundle);
                resendLater();
                return;
            }
            boolean bounced = cause instanceof ConnectionLostException
                    || cause instanceof FalkonException fe && fe.code() == ErrorCode.SHUTTING_DOWN;
            if (bounced && reconnects && lost == null) {
                return; // the connection is coming back: re-attaching tells what to send again
            }
            unaccepted.remove(first);
            if (cause instanceof FalkonException fe && fe.code() == ErrorCode.INVALID_TASK) {
                refusedTask(bundle, fe);
                return;
            }
            failBundle(bundle, cause);
        });
    }

    /**
     * On the I/O thread: the dispatcher refused a bundle because of one task in it (it accepts a
     * bundle whole or not at all). The bundle is halved and each half sent again, down to the task
     * it refuses alone, which fails with the dispatcher's reason: the others run. Costs nothing
     * unless a task is refused; k refused tasks of a bundle of n cost about k·log2(n) more SUBMITs.
     */
    private void refusedTask(List<Message.SubmittedTask> bundle, FalkonException why) {
        if (bundle.size() == 1) {
            long taskId = bundle.get(0).clientTaskId();
            BiConsumer<Long, FalkonException> l = refusedListener;
            if (l != null && pending.containsKey(taskId)) {
                l.accept(taskId, why);
            }
            failBundle(bundle, why);
            return;
        }
        int half = bundle.size() / 2;
        send(new ArrayList<>(bundle.subList(0, half)));
        send(new ArrayList<>(bundle.subList(half, bundle.size())));
    }

    /**
     * On the I/O thread: once per BUSY episode, sends the refused bundles again after a pause (10 ms
     * doubling to 1 s while the dispatcher stays busy), then whatever was queued meanwhile.
     */
    private void resendLater() {
        if (resendScheduled) {
            return;
        }
        resendScheduled = true;
        long delayMillis = Math.min(1000, 10L << Math.min(busyAnswers++, 7));
        Executor later = CompletableFuture.delayedExecutor(delayMillis, TimeUnit.MILLISECONDS, connection.executor());
        later.execute(() -> {
            resendScheduled = false;
            if (!attached || lost != null) {
                return; // re-attaching sends them; a lost instance has failed them
            }
            List<List<Message.SubmittedTask>> again = new ArrayList<>(refused.values());
            refused.clear();
            again.forEach(this::send);
            flush();
        });
    }

    /**
     * On the I/O thread, after a reconnection: take the instance over again, then send again every
     * bundle whose acceptance was not confirmed (the dispatcher answers those it had accepted without
     * queueing them twice), then carry on.
     */
    private void reattach() {
        attached = false;
        long[] moved = movedAway;
        (moved == null ? connection.attach(id, secret) : connection.attachMoved(id, secret, moved))
                .whenComplete((reply, err) -> {
            if (err != null) {
                Throwable cause = err instanceof CompletionException && err.getCause() != null
                        ? err.getCause() : err;
                if (cause instanceof ConnectionLostException && lost == null) {
                    return; // broke again before the answer: the next reconnection retries
                }
                lost = new FalkonException(cause instanceof FalkonException fe ? fe.code() : null,
                        "instance " + Long.toUnsignedString(id, 16) + " could not be re-attached after the "
                                + "connection to " + connection.address() + " broke: " + cause.getMessage());
                failAll(lost);
                return;
            }
            List<List<Message.SubmittedTask>> again = new ArrayList<>(unaccepted.values());
            again.addAll(refused.values());
            unaccepted.clear();
            refused.clear();
            attached = true;
            if (moved != null) {
                return; // its tasks run elsewhere now: nothing is sent again here
            }
            for (List<Message.SubmittedTask> bundle : again) {
                send(bundle);
            }
            flush();
        });
    }

    /**
     * For failover ({@link DistributedInstance}): the caller has sent this instance's unfinished tasks
     * to other dispatchers. From now on nothing more is sent here; tasks not yet sent fail; and when
     * the connection comes back (the dispatcher restarted from its journal) the re-attachment names
     * every task sent here without a result, so that the dispatcher cancels them rather than run them
     * again, and hands over what finished before it went away. Results that still arrive complete
     * their futures as usual. Runs on the I/O thread; the future completes once it has.
     */
    CompletableFuture<Void> moveAway() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        connection.executor().execute(() -> {
            long[] ids = new long[pending.size()];
            int n = 0;
            for (Long taskId : pending.keySet()) {
                if (n == ids.length) {
                    ids = java.util.Arrays.copyOf(ids, n * 2 + 1);
                }
                ids[n++] = taskId;
            }
            movedAway = java.util.Arrays.copyOf(ids, n);
            unaccepted.clear(); // a bundle the dispatcher may or may not have: named above, never sent again
            refused.clear();
            failUnsent(new FalkonException(null, "moved to another dispatcher before it was sent"));
            done.complete(null);
        });
        return done;
    }

    private void failBundle(List<Message.SubmittedTask> bundle, Throwable cause) {
        int released = 0;
        for (Message.SubmittedTask t : bundle) {
            CompletableFuture<TaskResult> f = pending.remove(t.clientTaskId());
            if (f != null) {
                released++;
                f.completeExceptionally(cause);
            }
        }
        finished(released);
    }

    private void finished(int n) {
        if (n == 0) {
            return;
        }
        permits.release(n);
        outstanding.finished(n);
    }

    /** Calls {@code listener} with every result as it arrives (on the I/O thread), besides the futures. */
    @Override
    public void onResult(Consumer<TaskResult> listener) {
        this.listener = listener;
    }

    /** On the I/O thread, before the refused task's future fails. */
    @Override
    public void onRefused(BiConsumer<Long, FalkonException> listener) {
        this.refusedListener = listener;
    }

    /**
     * For an instance taken over ({@link FalkonClient#attach}): how many results the dispatcher had kept
     * for it, all finished before the takeover, and sent to the listener first. 0 for a new instance.
     */
    public int redelivered() {
        return redelivered;
    }

    /**
     * For an instance taken over: the highest task id submitted to it so far (by any client), -1 for
     * none; its tasks are numbered from 0, so this plus one is how many were submitted when ids were
     * given in order, as {@link #submit} gives them.
     */
    public long highestTaskId() {
        return nextTaskIdAtStart - 1;
    }

    /** The most tasks that may be unfinished before {@link #submit} blocks ({@link ClientOptions#maxInFlight()}). */
    public int maxInFlight() {
        return maxInFlight;
    }

    /** Tasks submitted and not yet finished. */
    @Override
    public int outstanding() {
        return outstanding.get();
    }

    /**
     * Stops acknowledging results: they are still handed to this instance, and the dispatcher keeps
     * them (within the instance's lease) for whoever takes the instance over later
     * ({@code falkon wait}, {@code falkon results}). Call before results can arrive.
     */
    public Instance keepingResults() {
        acknowledging = false;
        return this;
    }

    /**
     * Leaves the instance running on the dispatcher and this client: every task submitted so far is
     * sent and accepted first; then the instance is let go without being destroyed, its tasks run on,
     * and its results wait (unacknowledged, within its lease) for a client with its {@link #key()}.
     * The futures of its unfinished tasks fail, saying so. Needs a lease
     * ({@link ClientOptions#withLeaseSeconds}).
     *
     * @return the key that takes the instance over again
     */
    public String detach() throws InterruptedException {
        acknowledging = false;
        CompletableFuture<Void> sent = new CompletableFuture<>();
        connection.executor().execute(() -> {
            flush();
            sent.complete(null);
        });
        await(sent, "detach");
        Object idle = outstanding.monitor();
        // accepted means: nothing queued to send, nothing sent and unanswered, nothing refused. Asked
        // of the I/O thread without holding the monitor: that thread takes it when the last result
        // arrives, and would wait for this one while this one waits for it.
        while (lost == null && (queuedToSend.get() > 0 || !allAccepted())) {
            synchronized (idle) {
                idle.wait(50);
            }
        }
        if (lost != null) {
            throw lost;
        }
        closed = true;
        connection.unroute(id);
        failAll(new FalkonException(null, "the instance was detached: its result is kept by the dispatcher "
                + "(take it over with the key)"));
        onClose.run();
        return key();
    }

    private boolean allAccepted() {
        CompletableFuture<Boolean> none = new CompletableFuture<>();
        connection.executor().execute(() -> none.complete(unaccepted.isEmpty() && refused.isEmpty()));
        return none.join();
    }

    /** Waits until every task submitted so far has a result. */
    @Override
    public void awaitAll() throws InterruptedException {
        outstanding.awaitNone();
    }

    /**
     * Why the instance was lost (its connection broke for good, or the dispatcher no longer knows it),
     * or null while it is usable: its unfinished tasks' futures failed with this, no result will
     * come for them.
     */
    @Override
    public FalkonException lostCause() {
        return lost;
    }

    /** Waits up to {@code timeout} for every task submitted so far; returns whether they all finished. */
    @Override
    public boolean awaitAll(Duration timeout) throws InterruptedException {
        return outstanding.awaitNone(timeout);
    }

    /** The instance's status document (queued, running, completed, failed, ...). */
    public String status() {
        checkUsable();
        return await(connection.status(id), "status");
    }

    /** See {@link TaskInstance#halt()}: sends what is queued, then HALT. */
    @Override
    public int halt() {
        checkUsable();
        CompletableFuture<Void> sent = new CompletableFuture<>();
        connection.executor().execute(() -> {
            flush();
            sent.complete(null);
        });
        return await(sent.thenCompose(v -> connection.halt(id)), "halt");
    }

    /**
     * Cancels some of this instance's tasks, by their ids ({@link TaskResult#taskId()}: the order of
     * submission, from 0): each unfinished one ends CANCELLED (a running one is killed on its
     * executor) and its future completes with that result; the tasks that need it end too. The
     * instance goes on. Returns how many of those named were unfinished.
     */
    public int cancelTasks(long... taskIds) {
        checkUsable();
        if (taskIds.length == 0) {
            return 0;
        }
        CompletableFuture<Void> sent = new CompletableFuture<>();
        connection.executor().execute(() -> {
            flush(); // a task still in this client's bundle reaches the dispatcher first
            sent.complete(null);
        });
        long[] ids = taskIds.clone();
        return await(sent.thenCompose(v -> connection.cancelTasks(id, ids)), "cancel tasks");
    }

    /**
     * Destroys the instance on the dispatcher: unfinished tasks are cancelled (their futures
     * complete with status CANCELLED). Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (lost == null && connection.connected()) { // while reconnecting, the lease will end it
                CompletableFuture<Void> sent = new CompletableFuture<>();
                connection.executor().execute(() -> {
                    flush();
                    sent.complete(null);
                });
                await(sent.thenCompose(v -> connection.destroy(id)), "destroy");
            }
        } catch (FalkonException e) {
            if (lost == null) {
                throw e;
            }
        } finally {
            connection.unroute(id);
            FalkonException gone = new FalkonException(null, "instance closed before the task finished");
            failAll(gone);
            onClose.run();
        }
    }

    private void failAll(FalkonException cause) {
        int n = 0;
        for (Long taskId : pending.keySet()) {
            CompletableFuture<TaskResult> f = pending.remove(taskId);
            if (f != null) {
                n++;
                f.completeExceptionally(cause);
            }
        }
        finished(n);
        failUnsent(cause);
    }

    /** Fails the tasks not yet put in a bundle. */
    private void failUnsent(FalkonException cause) {
        int n = 0;
        Queued q;
        while ((q = toSend.poll()) != null) {
            queuedToSend.decrementAndGet();
            q.future().completeExceptionally(cause);
            n++;
        }
        finished(n);
    }

    static <T> T await(CompletableFuture<T> f, String what) {
        try {
            return f.get(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FalkonException("interrupted while waiting for " + what, e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof FalkonException fe) {
                throw fe;
            }
            throw new FalkonException(what + " failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new FalkonException("no answer to " + what + " within 60 s", e);
        }
    }

    private final class Sink implements ResultSink {
        @Override
        public void deliver(List<Message.DeliveredResult> results) {
            long deliveredMicros = Clock.SYSTEM.nowMicros();
            Consumer<TaskResult> l = listener;
            int done = 0;
            long maxSeq = 0;
            for (int i = 0, n = results.size(); i < n; i++) {
                Message.DeliveredResult d = results.get(i);
                maxSeq = Math.max(maxSeq, d.seq());
                CompletableFuture<TaskResult> f = pending.remove(d.clientTaskId());
                if (f == null) {
                    // a duplicate, or (taken over by id) a task another client submitted: once to the listener
                    if (inherited != null && l != null && inherited.add(d.clientTaskId())) {
                        l.accept(new TaskResult(d.clientTaskId(), d.attempt(), d.executorId(), d.submittedMicros(),
                                d.dispatchedMicros(), d.completedMicros(), deliveredMicros, d.execution()));
                    }
                    continue;
                }
                done++;
                TaskResult r = new TaskResult(d.clientTaskId(), d.attempt(), d.executorId(), d.submittedMicros(),
                        d.dispatchedMicros(), d.completedMicros(), deliveredMicros, d.execution());
                if (l != null) {
                    l.accept(r); // before the future: whoever waits on the futures sees the listener's work done
                }
                f.complete(r);
            }
            finished(done);
            if (maxSeq > 0 && acknowledging) {
                connection.ack(id, maxSeq); // a redelivered duplicate is acknowledged too
            }
        }

        @Override
        public void reconnected() {
            reattach();
        }

        @Override
        public void connectionLost(Throwable cause) {
            lost = cause instanceof FalkonException fe ? fe : new FalkonException("connection lost", cause);
            failAll(lost);
        }
    }

    @Override
    public String toString() {
        return "Instance[" + Long.toUnsignedString(id, 16) + " on " + connection.address() + ", "
                + outstanding.get() + " outstanding of at most " + maxInFlight + "]";
    }
}
