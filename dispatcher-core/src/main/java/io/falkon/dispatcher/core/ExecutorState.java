package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.ExecutorView;
import io.falkon.protocol.Message;

import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * A registered executor: its connection, credits and the tasks it is running. Its mutable fields
 * belong to one part each, which alone writes them (CoreOwnershipTest holds the table): credits,
 * suspension and outcomes to the {@link ExecutorPool}, the running tasks to the {@link TaskLedger},
 * the cached objects to the {@link CacheIndex}. Everyone else reads them through the methods below.
 */
final class ExecutorState implements ExecutorView {
    final Link link;
    final String id;
    final String host;
    final int slots;
    /** The memory it advertises for tasks ({@code memoryMiB} attribute), or {@link Long#MAX_VALUE} when it states none. */
    final long memoryMiB;
    /** Memory stated by the tasks it runs or holds (the ledger's). */
    long memoryInUseMiB;
    /**
     * The scratch space it advertises for tasks ({@code diskMiB} attribute: free space in its working
     * directory's file system when it registered), or {@link Long#MAX_VALUE} when it states none.
     */
    final long diskMiB;
    /** Scratch space stated by the tasks it runs or holds (the ledger's). */
    long diskInUseMiB;
    final boolean noExec;
    /** The implementation it says it is ({@code java}, {@code c}, ...; peer-provided, escaped when shown). */
    final String impl;
    /** Monotonic tick of its registration. */
    final long connectedMicros;
    int credits;
    /** Tasks dispatched to it whose results have not come back, by task id (the ledger's). */
    final Map<Long, Task> tasks = new HashMap<>();
    /** Results it returned. */
    long completed;
    boolean alive = true;
    /** No work while suspended, until {@link #suspendedUntilMicros} (monotonic tick). */
    boolean suspended;
    long suspendedUntilMicros;
    long suspensions;
    long failures;
    final OutcomeWindow outcomes;
    /** Object ids its cache holds, per its reports (data diffusion). */
    final Set<String> cached = new HashSet<>();
    /** Temporary objects it holds for their readers (each key's {@code holder} is this executor). */
    final Set<Dataflow.Key> held = new HashSet<>();
    /** Its cache server as peers reach it, {@code host:port}, or null when it has none. */
    final String cachePeer;
    /** Whether it sits in the scheduler's ring of executors with credits. */
    boolean inRing;

    ExecutorState(Link link, Message.Register reg, long tickMicros, long windowMicros) {
        this.outcomes = new OutcomeWindow(windowMicros);
        this.impl = reg.attributes().getOrDefault("impl", "");
        String port = reg.attributes().get("cachePort");
        String host = reg.attributes().getOrDefault("cacheHost", link.remoteHost());
        this.cachePeer = port == null ? null : host + ":" + port;
        this.link = link;
        this.id = reg.executorId();
        this.host = reg.host();
        this.slots = reg.slots();
        this.memoryMiB = advertised(reg, "memoryMiB");
        this.diskMiB = advertised(reg, "diskMiB");
        this.noExec = reg.noExec();
        this.connectedMicros = tickMicros;
    }

    /**
     * A registration's attribute of MiB it offers ({@code memoryMiB}, {@code diskMiB});
     * {@link Long#MAX_VALUE} without one, -1 when it is not a number.
     */
    static long advertised(Message.Register reg, String attribute) {
        String v = reg.attributes().get(attribute);
        if (v == null) {
            return Long.MAX_VALUE;
        }
        try {
            long m = Long.parseLong(v);
            return m >= 0 ? m : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** Whether {@code t} could ever run here: it asks for no more slots, memory and disk than it has. */
    boolean couldHold(Task t) {
        return t.cores <= slots && t.memoryMiB <= memoryMiB && t.diskMiB <= diskMiB;
    }

    /** Whether {@code t} fits now: credits for its cores, memory and disk not stated by its running tasks. */
    boolean fitsNow(Task t) {
        return t.cores <= credits && t.memoryMiB <= memoryMiB - memoryInUseMiB && t.diskMiB <= diskMiB - diskInUseMiB;
    }

    /** The task it runs under {@code taskId}, or null. */
    Task task(long taskId) {
        return tasks.get(taskId);
    }

    /** The tasks it is running, read-only (copy it to change the ledger while going through it). */
    Collection<Task> runningTasks() {
        return Collections.unmodifiableCollection(tasks.values());
    }

    /** How many objects its cache reports holding. */
    int cachedObjects() {
        return cached.size();
    }

    boolean suspended() {
        return suspended;
    }

    /** Whether the dispatcher may send it work now. */
    boolean eligible() {
        return alive && !suspended;
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public String host() {
        return host;
    }

    @Override
    public int slots() {
        return slots;
    }

    @Override
    public int credits() {
        return credits;
    }

    @Override
    public int running() {
        return tasks.size();
    }
}
