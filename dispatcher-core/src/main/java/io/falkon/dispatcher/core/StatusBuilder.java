package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.DispatchPolicy;
import io.falkon.protocol.DataStats;

import java.util.ArrayList;
import java.util.List;

/**
 * Builds the immutable {@link StatusSnapshot} from the scheduler's parts, on the scheduler thread:
 * what each part counts, read and copied, nothing changed. Rendering it ({@link StatusRenderer})
 * happens on any thread.
 */
final class StatusBuilder {
    private final String dispatcherId;
    private final DispatchPolicy policy;
    private final TaskLedger ledger;
    private final ExecutorPool pool;
    private final InstanceRegistry instances;
    private final MemoryBudget memory;
    private final java.util.function.IntSupplier held;

    StatusBuilder(String dispatcherId, DispatchPolicy policy, TaskLedger ledger, ExecutorPool pool,
                  InstanceRegistry instances, MemoryBudget memory, java.util.function.IntSupplier held) {
        this.held = held;
        this.dispatcherId = dispatcherId;
        this.policy = policy;
        this.ledger = ledger;
        this.pool = pool;
        this.instances = instances;
        this.memory = memory;
    }

    private static java.util.Map<String, long[]> named(ExecutorState e) {
        if (e.offered == null) {
            return java.util.Map.of();
        }
        java.util.Map<String, long[]> m = new java.util.LinkedHashMap<>();
        for (int i = 0; i < e.offered.size(); i++) {
            m.put(e.offered.name(i), new long[]{e.offered.amount(i), e.namedInUse[i]});
        }
        return m;
    }

    /** The whole dispatcher at monotonic time {@code tickMicros}, up since {@code startedTick}. */
    StatusSnapshot snapshot(long tickMicros, long startedTick, DataStats data) {
        List<StatusSnapshot.ExecutorRow> rows = new ArrayList<>(pool.size());
        long offered = 0;
        long gpus = 0;
        for (ExecutorState e : pool.all()) {
            gpus += e.offered == null ? 0 : e.offered.amount(io.falkon.protocol.NamedResources.GPUS);
            boolean advertised = e.memoryMiB != Long.MAX_VALUE;
            offered += advertised ? e.memoryMiB : 0;
            rows.add(new StatusSnapshot.ExecutorRow(e.id, e.host, e.impl, e.slots, e.running(), e.credits, e.completed,
                    e.failures, e.suspended(), (e.suspendedUntilMicros - tickMicros) / 1e6, e.suspensions, e.noExec,
                    e.cachedObjects(), (tickMicros - e.connectedMicros) / 1e6, advertised ? e.memoryMiB : -1,
                    e.diskMiB == Long.MAX_VALUE ? -1 : e.diskMiB, named(e)));
        }
        long[] d = ledger.demand();
        List<StatusSnapshot.InstanceRow> listed = new ArrayList<>();
        for (Instance in : instances.all()) {
            if (listed.size() == StatusSnapshot.MAX_LISTED_INSTANCES) {
                break;
            }
            listed.add(row(in, tickMicros));
        }
        Window w = ledger.window();
        return new StatusSnapshot(dispatcherId, (tickMicros - startedTick) / 1e6, policy.name(), ledger.queued(),
                ledger.waiting(), held.getAsInt(), ledger.running(), ledger.completed(), ledger.succeeded(), ledger.cancelled(),
                ledger.retried(), instances.size(), instances.detachedCount(), pool.size(), pool.suspendedCount(),
                pool.totalSlots(), data, pool.index().objects(), w == null ? 0 : w.size(), ledger.queuedBytes(),
                ledger.runningBytes(), instances.retainedBytes(), instances.spill().bytes(), memory.budgetBytes(),
                memory.refusing(), memory.holdingDispatch(), memory.refusedBundles(), ledger.dispatchLatency(), rows,
                listed, new StatusSnapshot.Resources(d[0], d[1], d[2], d[3], offered, d[4], d[5], gpus));
    }

    /** One instance's line (also the whole answer to a STATUS_REQUEST naming it). */
    static StatusSnapshot.InstanceRow row(Instance in, long tickMicros) {
        double leaseLeft = in.detached ? Math.max(0, in.detachedMicros + in.leaseMicros - tickMicros) / 1e6 : -1;
        return new StatusSnapshot.InstanceRow(in.id, in.name, in.queued, in.waiting, in.running, in.completed,
                in.succeeded, in.cancelled, (int) Math.min(Integer.MAX_VALUE, in.unackedCount()),
                in.leaseMicros / 1_000_000, leaseLeft, in.createdMicros, in.highestClientTaskId(), in.lastSeq(),
                in.owner != null);
    }
}
