package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.ExecutorView;
import io.falkon.protocol.Message;
import io.falkon.protocol.NamedResources;

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
    /** The named resources it offers ({@code resources} attribute: GPUs, licences), null for none. */
    final NamedResources offered;
    /** Of each of {@link #offered}, in its order, how much the tasks it runs hold (the ledger's, through {@link #hold}). */
    final long[] namedInUse;
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
        this.offered = offered(reg);
        this.namedInUse = offered == null ? null : new long[offered.size()];
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

    /**
     * A registration's named resources; null without them, and when the attribute is malformed (the
     * executor then offers none: a task that needs them goes elsewhere or is refused naming what the
     * executors offer).
     */
    static NamedResources offered(Message.Register reg) {
        try {
            return NamedResources.parseAttribute(reg.attributes().get(NamedResources.ATTRIBUTE));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** Whether {@code t} could ever run here: it asks for no more slots, memory, disk and named resources than it has. */
    boolean couldHold(Task t) {
        return t.cores <= slots && t.memoryMiB <= memoryMiB && t.diskMiB <= diskMiB
                && (t.named == null || namedFit(t.named, false));
    }

    /** Whether {@code t} fits now: credits for its cores, memory, disk and named resources not held by its running tasks. */
    boolean fitsNow(Task t) {
        return t.cores <= credits && t.memoryMiB <= memoryMiB - memoryInUseMiB && t.diskMiB <= diskMiB - diskInUseMiB
                && (t.named == null || namedFit(t.named, true));
    }

    /** Whether each of {@code asked} is offered here, in full ({@code now}: beside what is held). */
    private boolean namedFit(NamedResources asked, boolean now) {
        if (offered == null) {
            return false;
        }
        for (int i = 0, j = 0; i < asked.size(); i++) {
            String name = asked.name(i);
            while (j < offered.size() && offered.name(j).compareTo(name) < 0) {
                j++; // both are sorted by name
            }
            if (j == offered.size() || !offered.name(j).equals(name)
                    || asked.amount(i) > offered.amount(j) - (now ? namedInUse[j] : 0)) {
                return false;
            }
        }
        return true;
    }

    /** Counts {@code r} as held by one more ({@code sign} 1) or one fewer (-1) running task; it was fitted here. */
    void hold(NamedResources r, int sign) {
        for (int i = 0; offered != null && i < r.size(); i++) {
            for (int j = 0; j < offered.size(); j++) {
                if (offered.name(j).equals(r.name(i))) {
                    namedInUse[j] += sign * r.amount(i);
                }
            }
        }
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
