package io.falkon.client;

import io.falkon.client.DistributedClient.Member;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.TaskStatus;
import io.falkon.protocol.Execution;
import io.falkon.protocol.TaskSpec;

import java.time.Duration;
import java.time.Instant;
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
 * dispatcher is lost (its connection gave up, or it came back without the task) goes to another one;
 * its future completes once, with the first result.
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

    @Override
    public CompletableFuture<TaskResult> submit(TaskSpec spec) {
        if (closed || halted) {
            throw new FalkonException(null, "the instance is " + (closed ? "closed" : "halted"));
        }
        permits.acquireUninterruptibly();
        outstanding.add();
        Task t = new Task(nextTaskId.getAndIncrement(), spec);
        pending.add(t);
        pump();
        return t.future;
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
        try {
            f = p.instance.submit(t.spec);
        } catch (FalkonException e) {
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
            p.held.decrementAndGet();
            if (ex == null) {
                finish(t, r);
            } else {
                again(p, t, ex);
            }
            pump();
        });
    }

    private void finish(Task t, TaskResult part) {
        if (t.settled.compareAndSet(false, true)) {
            // numbered as this instance numbers its tasks, not as the dispatcher that ran it did
            TaskResult r = new TaskResult(t.id, part.attempt(), part.executorId(), part.submittedMicros(),
                    part.dispatchedMicros(), part.completedMicros(), part.deliveredMicros(), part.execution());
            Consumer<TaskResult> l = listener;
            if (l != null) {
                l.accept(r); // before the future: whoever waits on the futures has heard every result
            }
            t.future.complete(r);
            done();
        }
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
        Instant now = Instant.now();
        long micros = now.getEpochSecond() * 1_000_000L + now.getNano() / 1000;
        finish(t, new TaskResult(t.id, 0, "", micros, 0, micros, micros, Execution.of(TaskStatus.CANCELLED,
                "the instance was halted before the task started", micros)));
    }

    /** Destroys the instance on every dispatcher: their unfinished tasks end CANCELLED, waiting ones fail. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
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
        owner.forget(this);
    }
}
