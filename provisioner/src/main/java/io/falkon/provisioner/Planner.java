package io.falkon.provisioner;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * The provisioner's decisions, with no I/O and no clock of its own (time comes in with each
 * observation), so that the policies can be tested step by step: given what the dispatcher and the
 * scheduler report, how many nodes to request now and which allocations to cancel.
 */
public final class Planner {

    /** Bounds of the pool. */
    public record Bounds(int minNodes, int maxNodes, int maxNodesPerAllocation, int slotsPerNode,
                         long allocationSeconds, double meanTaskSeconds, int gpusPerNode) {
        public Bounds {
            if (minNodes < 0 || maxNodes < Math.max(1, minNodes) || maxNodesPerAllocation < 1 || slotsPerNode < 1) {
                throw new IllegalArgumentException("need 0 <= min nodes <= max nodes, max nodes >= 1, "
                        + "nodes per allocation >= 1 and slots per node >= 1");
            }
            if (gpusPerNode < 1) {
                throw new IllegalArgumentException("GPUs per node must be at least 1 (asked only while tasks need them)");
            }
        }

        /** Nodes asked with one GPU each while queued tasks need GPUs. */
        public Bounds(int minNodes, int maxNodes, int maxNodesPerAllocation, int slotsPerNode, long allocationSeconds,
                      double meanTaskSeconds) {
            this(minNodes, maxNodes, maxNodesPerAllocation, slotsPerNode, allocationSeconds, meanTaskSeconds, 1);
        }
    }

    /**
     * One look at the world.
     *
     * @param queued        tasks waiting in the dispatcher's queue
     * @param running       tasks running
     * @param totalSlots    slots of every registered executor (ours and any others)
     * @param registered    executors registered now, per allocation name
     * @param busy          of those, the executors running something, per allocation name
     * @param jobs          the scheduler's state of each active allocation's job
     * @param need          what the queued and running tasks need: allocations are sized by it
     */
    public record Observation(long nowMillis, long queued, long running, long totalSlots,
                              Map<String, Integer> registered, Map<String, Integer> busy, Map<String, JobState> jobs,
                              Need need) {
        /** Tasks that state nothing: one core each, no memory. */
        public Observation(long nowMillis, long queued, long running, long totalSlots, Map<String, Integer> registered,
                           Map<String, Integer> busy, Map<String, JobState> jobs) {
            this(nowMillis, queued, running, totalSlots, registered, busy, jobs, new Need(queued, running, 0, 0, 0));
        }
    }

    /**
     * The cores of the queued and the running tasks, the memory they state (MiB), and the memory the
     * registered executors advertise together, with how many of them do (from which the memory of a
     * node to come is estimated: one executor per node).
     */
    public record Need(long queuedCores, long runningCores, long memoryMiB, long executorMemoryMiB,
                       int executorsAdvertisingMemory, long gpus, long executorGpus) {
        public Need(long queuedCores, long runningCores, long memoryMiB, long executorMemoryMiB,
                    int executorsAdvertisingMemory) {
            this(queuedCores, runningCores, memoryMiB, executorMemoryMiB, executorsAdvertisingMemory, 0, 0);
        }
    }

    /** What to do now. */
    public record Decision(int requestNodes, List<Allocation> cancel, int gpusPerNode) {
        public Decision(int requestNodes, List<Allocation> cancel) {
            this(requestNodes, cancel, 0);
        }
    }


    private final Bounds bounds;
    private final AcquisitionPolicy acquisition;
    private final ReleasePolicy release;
    private final List<Allocation> allocations = new ArrayList<>();
    private int lastRequest;
    private int requests;
    private long queueLowSince = -1;
    private final boolean dispatcherPerAllocation;

    public Planner(Bounds bounds, AcquisitionPolicy acquisition, ReleasePolicy release) {
        this(bounds, acquisition, release, false);
    }

    /**
     * @param dispatcherPerAllocation the tiered layout: one node of each allocation runs its
     *                                dispatcher, the others its executors
     */
    public Planner(Bounds bounds, AcquisitionPolicy acquisition, ReleasePolicy release,
                   boolean dispatcherPerAllocation) {
        this.bounds = bounds;
        this.acquisition = acquisition;
        this.release = release;
        this.dispatcherPerAllocation = dispatcherPerAllocation;
    }

    public Decision decide(Observation o) {
        int activeNodes = 0;
        long pendingSlots = 0;
        for (Allocation a : allocations) {
            if (!a.active()) {
                continue;
            }
            JobState js = o.jobs().get(a.jobId());
            int reg = o.registered().getOrDefault(a.name(), 0);
            a.registered(reg);
            if (js == JobState.DONE) {
                a.reach(Allocation.Stage.RELEASED, o.nowMillis());
                continue;
            }
            if (js == JobState.RUNNING || reg > 0) {
                a.reach(Allocation.Stage.RUNNING, o.nowMillis());
            } else if (js == JobState.QUEUED) {
                a.reach(Allocation.Stage.QUEUED, o.nowMillis());
            }
            a.busy(o.busy().getOrDefault(a.name(), 0) > 0, o.nowMillis());
            if (reg >= a.executors()) {
                a.reach(Allocation.Stage.REGISTERED, o.nowMillis());
            }
            activeNodes += a.nodes();
            if (a.maxRegistered() < a.executors() && !a.cancelRequested()) {
                pendingSlots += (long) (a.executors() - a.maxRegistered()) * bounds.slotsPerNode(); // on their way
            }
        }

        int request = 0;
        // cores, not tasks: a task of four cores needs four slots
        Need need = o.need();
        long demand = need.queuedCores() + need.runningCores();
        long capacity = o.totalSlots() + pendingSlots;
        int room = bounds.maxNodes() - activeNodes;
        if (room > 0) {
            int needed = demand > capacity ? (int) Math.min(Integer.MAX_VALUE,
                    (demand - capacity + bounds.slotsPerNode() - 1) / bounds.slotsPerNode()) : 0;
            int forMemory = nodesForMemory(need, pendingSlots / bounds.slotsPerNode());
            int forGpus = nodesForGpus(need, pendingSlots / bounds.slotsPerNode());
            boolean short_ = needed > 0 || forMemory > 0 || forGpus > 0;
            needed = Math.max(Math.max(needed, Math.max(forMemory, forGpus)), bounds.minNodes() - activeNodes);
            if (needed > 0) {
                int asked = short_ ? acquisition.nodes(new AcquisitionPolicy.Demand(needed, lastRequest,
                        requests, need.queuedCores(), bounds.slotsPerNode(), bounds.meanTaskSeconds(),
                        bounds.allocationSeconds())) : needed;
                request = Math.max(1, Math.min(Math.min(asked, needed), Math.min(room, bounds.maxNodesPerAllocation())));
            }
        }

        List<Allocation> cancel = Collections.emptyList();
        if (release.centralized() && !release.never()) {
            if (o.queued() < release.queueBelow()) {
                if (queueLowSince < 0) {
                    queueLowSince = o.nowMillis();
                }
                if (o.nowMillis() - queueLowSince >= release.idle().toMillis()) {
                    cancel = idleAllocations(o, activeNodes);
                }
            } else {
                queueLowSince = -1;
            }
        }
        // while tasks need GPUs, every new node comes with them
        return new Decision(request, cancel, need.gpus() > 0 ? bounds.gpusPerNode() : 0);
    }

    /**
     * Nodes to add for the GPUs the tasks ask for beyond what the executors offer (and the nodes on
     * their way would, {@link Bounds#gpusPerNode} each).
     */
    private int nodesForGpus(Need need, long pendingNodes) {
        long capacity = need.executorGpus() + pendingNodes * bounds.gpusPerNode();
        return need.gpus() > capacity ? (int) Math.min(Integer.MAX_VALUE,
                (need.gpus() - capacity + bounds.gpusPerNode() - 1) / bounds.gpusPerNode()) : 0;
    }

    /**
     * Nodes to add for the memory the tasks state beyond what the executors advertise (and those on
     * their way would, each like the average registered one); 0 while none advertises memory.
     */
    private static int nodesForMemory(Need need, long pendingNodes) {
        if (need.memoryMiB() <= 0 || need.executorsAdvertisingMemory() <= 0 || need.executorMemoryMiB() <= 0) {
            return 0;
        }
        long perNode = Math.max(1, need.executorMemoryMiB() / need.executorsAdvertisingMemory());
        long capacity = need.executorMemoryMiB() + pendingNodes * perNode;
        return need.memoryMiB() > capacity
                ? (int) Math.min(Integer.MAX_VALUE, (need.memoryMiB() - capacity + perNode - 1) / perNode) : 0;
    }

    /**
     * Registered allocations none of whose executors has been busy for the idle time, newest first,
     * keeping the minimum number of nodes.
     */
    private List<Allocation> idleAllocations(Observation o, int activeNodes) {
        List<Allocation> out = new ArrayList<>();
        int left = activeNodes;
        for (int i = allocations.size() - 1; i >= 0; i--) {
            Allocation a = allocations.get(i);
            if (a.active() && !a.cancelRequested() && a.stage() == Allocation.Stage.REGISTERED
                    && a.idleSince() >= 0 && o.nowMillis() - a.idleSince() >= release.idle().toMillis()
                    && left - a.nodes() >= bounds.minNodes()) {
                a.cancelled();
                left -= a.nodes();
                out.add(a);
            }
        }
        return out;
    }

    /** Records a request the scheduler accepted. */
    public Allocation requested(String name, int nodes, String jobId, long nowMillis) {
        Allocation a = new Allocation(name, nodes, dispatcherPerAllocation && nodes > 1 ? nodes - 1 : nodes, jobId,
                nowMillis);
        allocations.add(a);
        lastRequest = nodes;
        requests++;
        return a;
    }

    /** Marks an allocation released without waiting for the scheduler (e.g. its submit failed later). */
    public void released(Allocation a, long nowMillis) {
        a.reach(Allocation.Stage.RELEASED, nowMillis);
    }

    public List<Allocation> allocations() {
        return Collections.unmodifiableList(allocations);
    }

    public List<String> activeJobIds() {
        List<String> ids = new ArrayList<>();
        for (Allocation a : allocations) {
            if (a.active()) {
                ids.add(a.jobId());
            }
        }
        return ids;
    }
}
