package io.falkon.client;

import io.falkon.client.DistributedClient.Member;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Execution;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskStatus;
import io.falkon.protocol.time.Clock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * One instance on every dispatcher of a {@link DistributedClient}, used as one. Submitted tasks wait
 * here and go to the dispatcher with the most free capacity — its executors' slots, twice over so
 * that each keeps a short queue, less what it holds of ours — so that every dispatcher's executors
 * stay busy to the end without any of them holding a backlog another could run. A task whose
 * dispatcher is lost goes to another one; its future completes once, with the first result.
 *
 * <p><b>Failover.</b> A dispatcher is lost when it has not answered for
 * {@link ClientOptions#failoverAfter()} (killed, hung, cut off), when its connection gives up, or when
 * it comes back without the task. Its unfinished tasks are then sent to the others at once; a task may
 * run twice only if it may already have been running there (at least once). If it comes back (restarted
 * from its journal) its part of this instance re-attaches naming the tasks that moved, which it cancels
 * before they could run again; results it had before it went away are taken if they come first.
 *
 * <p>Tasks sent to a dispatcher are Falkon tasks like any other: the dispatcher retries them after
 * framework failures on its own executors; only a dispatcher's loss moves them here. Thread-safe.
 */
public final class DistributedInstance implements TaskInstance {
    /** A task sent this often without a result is failed rather than sent again. */
    private static final int MAX_SENDS = 5;

    private final DistributedClient owner;
    private final String name;
    private final Map<Member, Part> parts = new ConcurrentHashMap<>();
    /** Parts whose tasks moved elsewhere (failover), until their dispatcher is back or the instance closes. */
    private final List<Part> movedFrom = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final ConcurrentLinkedDeque<Task> pending = new ConcurrentLinkedDeque<>();
    private final Unfinished outstanding = new Unfinished();
    private final AtomicLong resent = new AtomicLong();
    private final Semaphore permits;
    private volatile Consumer<TaskResult> listener;
    private volatile BiConsumer<Long, FalkonException> refusedListener;
    private final AtomicLong nextTaskId = new AtomicLong();
    private volatile FalkonException lost;
    private volatile boolean closed;
    /** Halted ({@link #halt()}): nothing more is sent; what comes back unsent is cancelled. */
    private volatile boolean halted;
    /** Since when no dispatcher could take tasks while some waited (-1: one can). */
    private volatile long strandedSince = -1;

    /** A submitted task and where it is. */
    private static final class Task {
        /** Its number in this instance (order of submission), which its result carries. */
        final long id;
        final TaskSpec spec;
        final CompletableFuture<TaskResult> future = new CompletableFuture<>();
        /** Set by whoever settles the task first: its result is heard and its future completed once. */
        final AtomicBoolean settled = new AtomicBoolean();
        int sends;
        /** Where it was sent last (null before): a result from elsewhere is a moved task's earlier try. */
        volatile Part at;
        /** Tasks it waits for (this side resolves dependencies); 0 once it can be sent. */
        int missing;

        Task(long id, TaskSpec spec) {
            this.id = id;
            this.spec = spec;
        }
    }

    /** This instance's part on one dispatcher. */
    private static final class Part {
        final Member member;
        final Instance instance;
        final AtomicInteger held = new AtomicInteger();
        /** The tasks sent here without a result, which a failover takes elsewhere. */
        final java.util.Set<Task> inFlight = ConcurrentHashMap.newKeySet();
        volatile boolean dead;

        Part(Member member, Instance instance) {
            this.member = member;
            this.instance = instance;
        }

        boolean usable() {
            return !dead && member.usable() && instance.lostCause() == null;
        }

        /** Room for more: twice its slots (a short queue behind every running task), less what it holds. */
        int free() {
            // never more than half what the dispatcher's instance lets be unfinished: submit must not block
            long target = Math.min(2L * member.slots, instance.maxInFlight() / 2);
            return (int) (target - held.get());
        }
    }

    DistributedInstance(DistributedClient owner, String name) {
        this.owner = owner;
        this.name = name;
        this.permits = new Semaphore(owner.options().maxInFlight());
    }

    /** Makes sure this instance has a live part on {@code m} (a dispatcher that joined, or came back). */
    void join(Member m) {
        if (closed || !m.usable()) {
            return;
        }
        Part p = parts.get(m);
        if (p != null && !p.dead && p.instance.lostCause() == null) {
            return;
        }
        try {
            parts.put(m, new Part(m, m.client.createInstance(name)));
        } catch (FalkonException e) {
            // not reachable now: the next poll tries again
        }
    }

    /**
     * Submits a task. Dependencies (a task reading what another of this instance outputs, or
     * running after it by name) are resolved here, not by the dispatchers: the tasks of a workflow
     * spread over several of them, and each knows only what it was sent. A task is held back until
     * every task it needs has succeeded, then sent where there is room, its {@code after} and name
     * taken off; if one fails, it ends DEPENDENCY_FAILED without being sent (docs/scaling.md).
     */
    @Override
    public CompletableFuture<TaskResult> submit(TaskSpec spec) {
        if (closed || halted) {
            throw new FalkonException(null, "the instance is " + (closed ? "closed" : "halted"));
        }
        permits.acquireUninterruptibly();
        outstanding.add();
        Task t = new Task(nextTaskId.getAndIncrement(), spec);
        Key failedKey = null;
        synchronized (flow) {
            failedKey = flow.admit(t);
        }
        if (failedKey != null) {
            finish(t, dependencyFailed(t, failedKey));
        } else if (t.missing == 0) {
            pending.add(t);
        } else {
            held.add(t);
        }
        pump();
        return t.future;
    }

    // ---- dependencies, resolved on this side of the dispatchers ----------------------------------

    /** A key a task of this instance produces: an object id of its outputs, or its name. */
    private static final class Key {
        final String what;
        Task producer;
        /** 0 pending, 1 produced, -1 failed (by {@link #failedProducer}). */
        int state;
        long failedProducer;
        List<Task> waiters;

        Key(String what) {
            this.what = what;
        }
    }

    /** The instance's keys and the tasks they hold back (all under its lock). */
    private final class Flow {
        final Map<String, Key> objects = new java.util.HashMap<>();
        final Map<String, Key> names = new java.util.HashMap<>();

        /** Registers what {@code t} produces and counts what it misses; the failed key it needs, if any. */
        Key admit(Task t) {
            for (io.falkon.protocol.TaskOutput o : t.spec.outputs()) {
                objects.computeIfAbsent(o.id(), Key::new).producer = t;
            }
            String n = t.spec.name();
            if (n != null) {
                names.computeIfAbsent(n, x -> new Key("after:" + x)).producer = t;
            }
            Key failed = null;
            for (io.falkon.protocol.TaskInput in : t.spec.inputs()) {
                failed = need(objects.get(in.id()), t, failed);
            }
            for (String a : t.spec.after()) {
                failed = need(names.get(a), t, failed);
            }
            return failed;
        }

        private Key need(Key k, Task t, Key failed) {
            if (k == null || k.producer == t || failed != null) {
                return failed;
            }
            if (k.state < 0) {
                return k;
            }
            if (k.state == 0) {
                (k.waiters == null ? k.waiters = new ArrayList<>(2) : k.waiters).add(t);
                t.missing++;
            }
            return null;
        }

        /** {@code t} finished: its keys are produced or failed; returns the tasks that now go, and those that fail. */
        void finished(Task t, boolean ok, long firstFailed, List<Task> release, List<Map.Entry<Task, Key>> fail) {
            List<Key> keys = new ArrayList<>();
            for (io.falkon.protocol.TaskOutput o : t.spec.outputs()) {
                keys.add(objects.get(o.id()));
            }
            if (t.spec.name() != null) {
                keys.add(names.get(t.spec.name()));
            }
            for (Key k : keys) {
                if (k == null || k.producer != t) {
                    continue;
                }
                k.producer = null;
                k.state = ok ? 1 : -1;
                k.failedProducer = firstFailed;
                List<Task> ws = k.waiters;
                k.waiters = null;
                if (ws == null) {
                    continue;
                }
                for (Task w : ws) {
                    if (w.settled.get()) {
                        continue;
                    }
                    if (ok) {
                        if (--w.missing == 0) {
                            release.add(w);
                        }
                    } else {
                        w.missing = -1; // never sent
                        fail.add(Map.entry(w, k));
                    }
                }
            }
        }
    }

    private final Flow flow = new Flow();
    /** Tasks held back for what they need (their dependencies), until released or failed. */
    private final java.util.Set<Task> held = ConcurrentHashMap.newKeySet();

    /** What a task that can never run gets, naming the task that failed first upstream. */
    private static TaskResult dependencyFailed(Task t, Key k) {
        long micros = Clock.SYSTEM.nowMicros();
        List<io.falkon.protocol.ExtField> ext = List.of(new io.falkon.protocol.ExtField(
                io.falkon.protocol.ExtTags.DEPENDENCY, io.falkon.protocol.DataCodec.encodeDependency(
                        new io.falkon.protocol.DataCodec.Dependency(k.failedProducer, k.what))));
        String what = k.what.startsWith("after:") ? "to run after '" + k.what.substring(6) + "'"
                : "its input '" + k.what + "'";
        return new TaskResult(t.id, 0, "", micros, 0, micros, micros, new Execution(TaskStatus.DEPENDENCY_FAILED, -1,
                0, micros, micros, new byte[0], new byte[0], "not run: it needs " + what + ", and task "
                + k.failedProducer + " did not succeed", ext));
    }

    /** The task as a dispatcher gets it: its dependencies are met already, they are this side's business. */
    private static TaskSpec forDispatcher(TaskSpec spec) {
        if (spec.name() == null && spec.after().isEmpty()) {
            return spec;
        }
        return new TaskSpec(spec.argv(), spec.env(), spec.workDir(), spec.wallTimeMillis(), spec.ext().stream()
                .filter(f -> f.tag() != io.falkon.protocol.ExtTags.NAME && f.tag() != io.falkon.protocol.ExtTags.AFTER)
                .toList());
    }

    /**
     * After a task's final result: what it held back goes, or fails with it, and so on downstream
     * (a worklist: chains are long).
     */
    private void released(Task first, TaskResult firstResult) {
        java.util.ArrayDeque<Map.Entry<Task, TaskResult>> work = new java.util.ArrayDeque<>();
        work.add(Map.entry(first, firstResult));
        while (!work.isEmpty()) {
            Map.Entry<Task, TaskResult> done = work.poll();
            TaskResult r = done.getValue();
            List<Task> release = new ArrayList<>();
            List<Map.Entry<Task, Key>> fail = new ArrayList<>();
            io.falkon.protocol.DataCodec.Dependency upstream = io.falkon.protocol.DataCodec.dependencyOf(r.execution());
            synchronized (flow) {
                flow.finished(done.getKey(), r.succeeded(), upstream != null ? upstream.producer() : done.getKey().id,
                        release, fail);
            }
            for (Task w : release) {
                held.remove(w);
                if (halted || closed) {
                    cancelHalted(w);
                } else {
                    pending.add(w);
                }
            }
            for (Map.Entry<Task, Key> f : fail) {
                Task w = f.getKey();
                held.remove(w);
                TaskResult failed = dependencyFailed(w, f.getValue());
                if (settle(w, failed)) {
                    work.add(Map.entry(w, failed));
                }
            }
        }
    }

    /**
     * Sends waiting tasks to the dispatchers with free capacity, the freest first. Tasks are chosen
     * under this instance's lock and handed to the dispatchers' instances outside it: a result
     * arriving meanwhile (on a connection's I/O thread) must never wait for a submission to finish.
     */
    void pump() {
        List<Map.Entry<Part, Task>> chosen = new ArrayList<>();
        synchronized (this) {
            boolean anyUsable = false;
            while (!pending.isEmpty() && !closed && !halted) {
                Part best = null;
                for (Part p : parts.values()) {
                    if (!p.usable()) {
                        continue;
                    }
                    anyUsable = true;
                    if (p.free() > 0 && (best == null || p.free() > best.free())) {
                        best = p;
                    }
                }
                if (best == null) {
                    break;
                }
                Task t = pending.poll();
                if (t == null) {
                    break;
                }
                best.held.incrementAndGet();
                t.sends++;
                chosen.add(Map.entry(best, t));
            }
            strandedCheck(anyUsable || pending.isEmpty());
        }
        for (Map.Entry<Part, Task> c : chosen) {
            send(c.getKey(), c.getValue());
        }
    }

    /** Tasks no dispatcher could take for as long as a connection is given to come back fail, named. */
    private void strandedCheck(boolean someoneCanTake) {
        if (someoneCanTake || parts.values().stream().anyMatch(Part::usable)) {
            strandedSince = -1;
            return;
        }
        long now = System.nanoTime();
        if (strandedSince < 0) {
            strandedSince = now;
        } else if (now - strandedSince > owner.options().reconnectFor().toNanos()) {
            lost = new FalkonException(null, "no dispatcher of " + owner.members().size() + " could take tasks for "
                    + owner.options().reconnectFor().toSeconds() + " s");
            Task t;
            while ((t = pending.poll()) != null) {
                fail(t, lost);
            }
        }
    }

    private void send(Part p, Task t) {
        CompletableFuture<TaskResult> f;
        t.at = p;
        p.inFlight.add(t);
        try {
            f = p.instance.submit(forDispatcher(t.spec));
        } catch (FalkonException e) {
            p.inFlight.remove(t);
            p.held.decrementAndGet();
            if (halted) {
                cancelHalted(t);
                return;
            }
            p.dead = true;
            t.sends--;
            pending.addFirst(t);
            return;
        }
        f.whenComplete((r, ex) -> {
            if (!p.inFlight.remove(t)) {
                // moved elsewhere by a failover: a result it had here still counts if it comes first,
                // but not the cancellation its move asked for, nor a failure
                if (ex == null && r.execution().status() != TaskStatus.CANCELLED) {
                    finish(t, r);
                }
                return;
            }
            p.held.decrementAndGet();
            if (ex == null) {
                finish(t, r);
            } else {
                again(p, t, ex);
            }
            pump();
        });
    }

    /**
     * Failover: the dispatcher {@code m} is taken as lost. This instance's part there sends nothing
     * more, its unfinished tasks go to the other dispatchers at once (ahead of those waiting), and
     * its instance there will name them when it re-attaches (see {@link Instance#moveAway}).
     */
    void failover(Member m) {
        Part p = parts.get(m);
        if (p == null || closed) {
            return;
        }
        p.dead = true;
        parts.remove(m, p);
        movedFrom.add(p);
        p.instance.moveAway();
        List<Task> moved = new ArrayList<>();
        for (Task t : p.inFlight) {
            if (p.inFlight.remove(t)) {
                p.held.decrementAndGet();
                if (!t.settled.get()) {
                    moved.add(t);
                }
            }
        }
        for (int i = moved.size() - 1; i >= 0; i--) {
            Task t = moved.get(i);
            if (t.sends >= MAX_SENDS) {
                fail(t, new FalkonException(null, "sent to " + t.sends + " dispatchers without a result"));
            } else if (halted) {
                cancelHalted(t);
            } else {
                resent.incrementAndGet();
                pending.addFirst(t);
            }
        }
        pump();
    }

    /**
     * The lost dispatcher {@code m} answers again. Its old part re-attached already if its
     * connection broke (and the tasks that moved were cancelled there); destroying it cancels them in
     * any case (a dispatcher that only hung still has them). A new part joins for new tasks.
     */
    void back(Member m) {
        for (Part p : movedFrom) {
            if (p.member == m) {
                movedFrom.remove(p);
                CompletableFuture.runAsync(() -> {
                    try {
                        p.instance.close();
                    } catch (FalkonException e) {
                        // gone again: its lease ends it there
                    }
                });
            }
        }
        join(m);
    }

    private void finish(Task t, TaskResult part) {
        // numbered as this instance numbers its tasks, not as the dispatcher that ran it did
        TaskResult r = new TaskResult(t.id, part.attempt(), part.executorId(), part.submittedMicros(),
                part.dispatchedMicros(), part.completedMicros(), part.deliveredMicros(), part.execution());
        if (settle(t, r)) {
            released(t, r);
        }
    }

    /** Gives {@code t} its one result (heard, then its future completed); false when it had one already. */
    private boolean settle(Task t, TaskResult r) {
        if (!t.settled.compareAndSet(false, true)) {
            return false;
        }
        Consumer<TaskResult> l = listener;
        if (l != null) {
            l.accept(r); // before the future: whoever waits on the futures has heard every result
        }
        t.future.complete(r);
        done();
        return true;
    }

    /** The task's dispatcher could not give its result: send it elsewhere, unless it is the task's fault. */
    private void again(Part p, Task t, Throwable ex) {
        Throwable cause = ex instanceof CompletionException && ex.getCause() != null ? ex.getCause() : ex;
        if (p.instance.lostCause() != null) {
            p.dead = true;
        }
        if (halted && !closed) {
            cancelHalted(t); // it did not run (lost, or refused by a halted part), and nothing more starts
        } else if (cause instanceof FalkonException fe && fe.code() == ErrorCode.INVALID_TASK) {
            BiConsumer<Long, FalkonException> l = refusedListener;
            if (l != null && !t.settled.get()) {
                l.accept(t.id, fe);
            }
            fail(t, fe);
        } else if (closed) {
            fail(t, new FalkonException(null, "the instance was closed"));
        } else if (t.sends >= MAX_SENDS) {
            fail(t, new FalkonException("sent to " + t.sends + " dispatchers without a result", cause));
        } else {
            resent.incrementAndGet();
            pending.addFirst(t);
        }
    }

    private void fail(Task t, FalkonException e) {
        if (t.settled.compareAndSet(false, true)) {
            released(t, new TaskResult(t.id, 0, "", 0, 0, 0, 0, Execution.of(TaskStatus.EXECUTOR_LOST,
                    e.getMessage() == null ? "no result" : e.getMessage(), 0)));
            t.future.completeExceptionally(e);
            done();
        }
    }

    private void done() {
        permits.release();
        outstanding.finished(1);
    }

    @Override
    public void onResult(Consumer<TaskResult> l) {
        this.listener = l;
    }

    @Override
    public void onRefused(BiConsumer<Long, FalkonException> l) {
        this.refusedListener = l;
    }

    @Override
    public int outstanding() {
        return outstanding.get();
    }

    /** Tasks sent again because the dispatcher they were at was lost (not counting dispatchers' own retries). */
    public long resent() {
        return resent.get();
    }

    /** How many tasks each dispatcher holds of this instance now, by address. */
    public Map<String, Integer> heldBy() {
        Map<String, Integer> m = new ConcurrentHashMap<>();
        parts.forEach((member, p) -> m.merge(member.address, p.held.get(), Integer::sum));
        return m;
    }

    @Override
    public void awaitAll() throws InterruptedException {
        outstanding.awaitNone();
    }

    @Override
    public boolean awaitAll(Duration timeout) throws InterruptedException {
        return outstanding.awaitNone(timeout);
    }

    @Override
    public FalkonException lostCause() {
        return lost;
    }

    /**
     * Halts the instance on every dispatcher; the tasks still waiting here for one end CANCELLED
     * too (they never started).
     */
    @Override
    public int halt() {
        int n = 0;
        synchronized (this) {
            halted = true; // nothing more is sent anywhere
        }
        Task t;
        while ((t = pending.poll()) != null) {
            cancelHalted(t);
            n++;
        }
        for (Task h : List.copyOf(held)) {
            held.remove(h);
            cancelHalted(h);
            n++;
        }
        for (Part p : parts.values()) {
            try {
                n += p.instance.halt();
            } catch (FalkonException e) {
                // that dispatcher is gone: its tasks come back here to be cancelled, or are lost
            }
        }
        return n;
    }

    /** A task that was never sent ends as the dispatchers end those they had not started. */
    private void cancelHalted(Task t) {
        long micros = Clock.SYSTEM.nowMicros();
        finish(t, new TaskResult(t.id, 0, "", micros, 0, micros, micros, Execution.of(TaskStatus.CANCELLED,
                closed ? "the instance was closed before the task started"
                        : "the instance was halted before the task started", micros)));
    }

    /** Destroys the instance on every dispatcher: their unfinished tasks end CANCELLED, waiting ones fail. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Part p : movedFrom) {
            // a lost dispatcher may be hung, its connection still open: nobody waits for its answer
            CompletableFuture.runAsync(() -> {
                try {
                    p.instance.close();
                } catch (FalkonException e) {
                    // gone: its lease ends the instance there
                }
            });
        }
        movedFrom.clear();
        for (Part p : parts.values()) {
            try {
                p.instance.close();
            } catch (FalkonException e) {
                // that dispatcher is gone: its lease ends the instance there
            }
        }
        Task t;
        while ((t = pending.poll()) != null) {
            fail(t, new FalkonException(null, "the instance was closed before the task was sent"));
        }
        for (Task h : List.copyOf(held)) {
            held.remove(h);
            cancelHalted(h); // it never started: cancelled, as a dispatcher cancels what it holds
        }
        owner.forget(this);
    }
}
