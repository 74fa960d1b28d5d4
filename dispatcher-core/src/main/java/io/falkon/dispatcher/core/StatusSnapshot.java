package io.falkon.dispatcher.core;

import io.falkon.protocol.DataStats;

import java.util.List;

/**
 * The dispatcher's state at one moment, copied on the scheduler thread so that the status document
 * can be rendered anywhere (see {@link StatusRenderer}).
 *
 * @param waiting   tasks waiting for what other tasks of their instance produce (not in the queue)
 * @param held      tasks replayed from the journal after a restart, waiting for their client to
 *                  re-attach (or for the hold to end) before they are queued ({@link Recovery})
 * @param completed tasks with a final result: {@code succeeded}, {@code cancelled} (their instance
 *                  was destroyed first) and the failed rest
 */
public record StatusSnapshot(String dispatcherId, double uptimeSeconds, String policy, int queued, int waiting,
                      int held, int running,
                      long completed, long succeeded, long cancelled, long retried, int instances,
                      long detachedInstances,
                      int executorsRegistered, long executorsSuspended, int slots, DataStats data,
                      int indexedObjects, int window, long queuedBytes, long runningBytes, long retainedResultBytes,
                      long spilledResultBytes,
                      long budgetBytes, boolean refusingBundles, boolean holdingDispatch, long refusedBundles,
                      LatencyHistogram.Snapshot dispatchLatency, List<ExecutorRow> executors,
                      List<InstanceRow> instanceList, Resources resources) {

    /**
     * Cores and stated memory (MiB) of the queued and of the running tasks, and the memory the
     * executors advertise together (those that advertise none are not counted): what a provisioner
     * sizes allocations by.
     */
    public record Resources(long queuedCores, long queuedMemoryMiB, long runningCores, long runningMemoryMiB,
                            long executorMemoryMiB, long queuedGpus, long runningGpus, long executorGpus) {
        public Resources(long queuedCores, long queuedMemoryMiB, long runningCores, long runningMemoryMiB,
                         long executorMemoryMiB) {
            this(queuedCores, queuedMemoryMiB, runningCores, runningMemoryMiB, executorMemoryMiB, 0, 0, 0);
        }
    }

    /** The most instances the dispatcher's document lists (all are counted). */
    public static final int MAX_LISTED_INSTANCES = 1000;

    /**
     * One executor's line. {@code suspendedSeconds} is meaningful only when suspended; {@code memoryMiB}
     * and {@code diskMiB} are what it advertises for tasks, -1 when it advertises none; {@code resources}
     * its named resources, each as {@code {offered, inUse}} (empty when it offers none).
     */
    public record ExecutorRow(String id, String host, String impl, int slots, int running, int credits, long completed,
                       long failures, boolean suspended, double suspendedSeconds, long suspensions, boolean noExec,
                       int cachedObjects, double connectedSeconds, long memoryMiB, long diskMiB,
                       java.util.Map<String, long[]> resources) {
        public ExecutorRow(String id, String host, String impl, int slots, int running, int credits, long completed,
                           long failures, boolean suspended, double suspendedSeconds, long suspensions, boolean noExec,
                           int cachedObjects, double connectedSeconds, long memoryMiB, long diskMiB) {
            this(id, host, impl, slots, running, credits, completed, failures, suspended, suspendedSeconds, suspensions,
                    noExec, cachedObjects, connectedSeconds, memoryMiB, diskMiB, java.util.Map.of());
        }
    }

    /**
     * The instance document ({@code STATUS} for one instance). {@code leaseLeftSeconds} is -1 while a
     * client has it (its lease runs only while it is detached); {@code createdMicros} is wall-clock time.
     */
    public record InstanceRow(long id, String name, int queued, int waiting, int running, long completed, long succeeded,
                              long cancelled, int unacknowledged, long leaseSeconds, double leaseLeftSeconds,
                              long createdMicros, long highestTaskId, long lastSeq, boolean attached) {
    }
}
