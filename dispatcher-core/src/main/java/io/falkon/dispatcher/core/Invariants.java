package io.falkon.dispatcher.core;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * What must hold between events, recomputed from scratch: every counter equals the sum it stands
 * for, every dispatched task sits on exactly one executor (and knows it), every queued task is in
 * the queue and on no executor. The scheduler harness runs this after every event; the loop runs it
 * after every batch when the JVM runs with assertions on ({@code -ea}). A violation is a bug in the
 * scheduler, and the dispatcher stops rather than carry on with state it cannot trust.
 */
final class Invariants {
    private Invariants() {
    }

    static void check(TaskLedger ledger, ExecutorPool pool, InstanceRegistry instances) {
        Map<Instance, int[]> perInstance = new HashMap<>(); // queued, running
        long[] queuedBytes = {0};
        long[] demand = {0, 0, 0, 0, 0, 0};
        int[] queued = {0};
        Set<Task> seen = new HashSet<>();
        Map<Integer, int[]> perPriority = new HashMap<>();
        Task[] previous = {null};
        Map<Instance, Task> lastOfInstance = new HashMap<>();
        ledger.forEachQueued(t -> true, t -> {
            Task p = previous[0];
            require(p == null || TaskQueue.ahead(p, t), "task %d (turn %d) is queued after task %d (turn %d)", t.id,
                    t.fairKey, p == null ? 0 : p.id, p == null ? 0 : p.fairKey);
            Task before = lastOfInstance.put(t.instance, t);
            require(before == t.qPrev, "task %d follows task %d of its instance in the queue, %s in its own order",
                    t.id, before == null ? 0 : before.id, t.qPrev == null ? "no task" : "task " + t.qPrev.id);
            require(before == null || before.priority >= t.priority, "task %d of priority %d holds a later turn than "
                    + "task %d of its instance, of priority %d", before == null ? 0 : before.id,
                    before == null ? 0 : before.priority, t.id, t.priority);
            previous[0] = t;
            perPriority.computeIfAbsent(t.priority, k -> new int[1])[0]++;
            queued[0]++;
            queuedBytes[0] += t.footprint();
            demand[0] += t.cores;
            demand[1] += t.memoryMiB;
            demand[4] += t.named == null ? 0 : t.named.amount(io.falkon.protocol.NamedResources.GPUS);
            require(t.queued, "task %d is in the queue but not marked queued", t.id);
            require(t.executor == null, "queued task %d also sits on executor %s", t.id,
                    t.executor == null ? "" : t.executor.id);
            require(seen.add(t), "task %d is in the queue twice", t.id);
            flowHolds(t);
            perInstance.computeIfAbsent(t.instance, k -> new int[2])[0]++;
        });
        require(queued[0] == ledger.queued(), "queue length %d, but %d tasks in it", ledger.queued(), queued[0]);
        require(perPriority.size() == ledger.queuedPriorities(), "the queue counts %d priorities, holds %d",
                ledger.queuedPriorities(), perPriority.size());
        perPriority.forEach((p, n) -> require(n[0] == ledger.queuedAt(p),
                "the queue counts %d tasks of priority %d, holds %d", ledger.queuedAt(p), p, n[0]));
        require(queuedBytes[0] == ledger.queuedBytes(), "queued bytes %d, but the queued tasks hold %d",
                ledger.queuedBytes(), queuedBytes[0]);

        int running = 0;
        long runningBytes = 0;
        int credits = 0;
        int slots = 0;
        for (ExecutorState e : pool.all()) {
            require(e.alive, "executor %s is registered but not alive", e.id);
            require(e.credits >= 0, "executor %s has %d credits", e.id, e.credits);
            slots += e.slots;
            if (e.eligible()) {
                credits += e.credits;
            }
            long memory = 0;
            long disk = 0;
            long[] named = e.offered == null ? null : new long[e.offered.size()];
            for (Task t : e.runningTasks()) {
                memory += t.memoryMiB;
                disk += t.diskMiB;
                for (int i = 0; named != null && i < named.length; i++) {
                    named[i] += t.named == null ? 0 : t.named.amount(e.offered.name(i));
                }
                require(e.task(t.id) == t, "executor %s does not list task %d under its id", e.id, t.id);
                require(t.executor == e, "task %d is on executor %s but points at %s", t.id, e.id,
                        t.executor == null ? "none" : t.executor.id);
                require(!t.queued, "task %d is on executor %s and in the queue", t.id, e.id);
                require(seen.add(t), "task %d is on two executors", t.id);
                flowHolds(t);
                running++;
                runningBytes += t.footprint();
                demand[2] += t.cores;
                demand[3] += t.memoryMiB;
                demand[5] += t.named == null ? 0 : t.named.amount(io.falkon.protocol.NamedResources.GPUS);
                perInstance.computeIfAbsent(t.instance, k -> new int[2])[1]++;
            }
            require(memory == e.memoryInUseMiB, "executor %s counts %d MiB in use, its tasks state %d", e.id,
                    e.memoryInUseMiB, memory);
            require(disk == e.diskInUseMiB, "executor %s counts %d MiB of disk in use, its tasks state %d", e.id,
                    e.diskInUseMiB, disk);
            for (int i = 0; named != null && i < named.length; i++) {
                require(named[i] == e.namedInUse[i] && named[i] <= e.offered.amount(i), "executor %s counts %d %s in "
                        + "use of %d, its tasks hold %d", e.id, e.namedInUse[i], e.offered.name(i),
                        e.offered.amount(i), named[i]);
            }
        }
        require(running == ledger.running(), "running count %d, but executors hold %d tasks", ledger.running(),
                running);
        require(runningBytes == ledger.runningBytes(), "running bytes %d, but executors hold %d",
                ledger.runningBytes(), runningBytes);
        require(java.util.Arrays.equals(demand, ledger.demand()), "queued and running cores and MiB %s, but the "
                + "tasks need %s", java.util.Arrays.toString(ledger.demand()), java.util.Arrays.toString(demand));
        require(credits == pool.totalCredits(), "total credits %d, but eligible executors hold %d",
                pool.totalCredits(), credits);
        require(slots == pool.totalSlots(), "total slots %d, but executors have %d", pool.totalSlots(), slots);

        int waiting = 0;
        long waitingBytes = 0;
        for (Instance in : instances.all()) {
            int[] n = {0};
            long[] b = {0};
            if (in.dataflow != null) {
                in.dataflow.forEachWaiting(t -> {
                    n[0]++;
                    b[0] += t.footprint();
                    require(t.flow != null && t.flow.waiting && !t.queued && t.executor == null && !t.finished,
                            "waiting task %d is also queued, running or finished", t.id);
                    require(t.flow.missing > 0, "task %d waits for %d keys", t.id, t.flow.missing);
                    require(seen.add(t), "task %d waits and is queued or running too", t.id);
                });
                require(n[0] == in.dataflow.waitingTasks(), "instance %s lists %d waiting tasks, counts %d",
                        Long.toUnsignedString(in.id, 16), n[0], in.dataflow.waitingTasks());
            }
            require(in.waiting == n[0], "instance %s counts %d waiting tasks, its dataflow holds %d",
                    Long.toUnsignedString(in.id, 16), in.waiting, n[0]);
            waiting += n[0];
            waitingBytes += b[0];
        }
        require(waiting == ledger.waiting(), "waiting count %d, but instances hold %d", ledger.waiting(), waiting);
        require(waitingBytes == ledger.waitingBytes(), "waiting bytes %d, but the waiting tasks hold %d",
                ledger.waitingBytes(), waitingBytes);

        long retained = 0;
        for (Instance in : instances.all()) {
            int[] counts = perInstance.getOrDefault(in, new int[2]);
            require(in.queued == counts[0], "instance %s counts %d queued tasks, the queue holds %d",
                    Long.toUnsignedString(in.id, 16), in.queued, counts[0]);
            require(in.running == counts[1], "instance %s counts %d running tasks, executors hold %d",
                    Long.toUnsignedString(in.id, 16), in.running, counts[1]);
            long bytes = 0;
            for (var r : in.retainedInMemory()) {
                bytes += Instance.footprint(r);
            }
            require(bytes == in.unackedBytes, "instance %s counts %d retained bytes, holds %d",
                    Long.toUnsignedString(in.id, 16), in.unackedBytes, bytes);
            retained += bytes;
            require(!in.spilling || (in.spilledFromSeq <= in.spilledThroughSeq && in.ackedSeq < in.spilledThroughSeq),
                    "instance %s spills seqs %d..%d, acknowledged to %d", Long.toUnsignedString(in.id, 16),
                    in.spilledFromSeq, in.spilledThroughSeq, in.ackedSeq);
            perInstance.remove(in);
        }
        for (Map.Entry<Instance, int[]> orphan : perInstance.entrySet()) {
            require(false, "%d queued and %d running tasks belong to instance %s, which is "
                            + "not registered", orphan.getValue()[0], orphan.getValue()[1],
                    Long.toUnsignedString(orphan.getKey().id, 16));
        }
        require(retained == instances.retainedBytes(), "retained bytes %d, but instances hold %d",
                instances.retainedBytes(), retained);
    }

    /**
     * A queued or running task's workflow record: none unless its instance has a dataflow, and not
     * waiting; what it produces is its instance's (a key of each of its outputs).
     */
    private static void flowHolds(Task t) {
        DataflowNode f = t.flow;
        if (f == null) {
            return;
        }
        require(t.instance.dataflow != null, "task %d has a workflow record but its instance no dataflow", t.id);
        require(!f.waiting && f.waitPrev == null && f.waitNext == null, "task %d is queued or running but waits", t.id);
        if (f.outputIds != null) {
            for (String id : f.outputIds) {
                require(t.instance.dataflow.object(id) != null, "task %d produces '%s', which its instance does "
                        + "not know", t.id, id);
            }
        }
    }

    private static void require(boolean ok, String format, Object... args) {
        if (!ok) {
            throw new IllegalStateException("scheduler invariant broken: " + String.format(format, args));
        }
    }
}
