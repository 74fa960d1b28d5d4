package io.falkon.dispatcher.core;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the dispatcher holds per task, against its budget (docs/reliability.md, "Backpressure"):
 * queued and running tasks and results awaiting acknowledgement, each at its measured size.
 *
 * <p>Two brakes, each with hysteresis (on above the mark, off below 80% of it):
 * <ul>
 * <li>over the budget in all, new bundles are refused with {@code BUSY} and sent again later by
 *     their clients. Connections are always read, so acknowledgements, which free results, always
 *     get through (a paused socket would also hold back the acks that end the pause);</li>
 * <li>with results awaiting acknowledgement over half the budget, nothing more is dispatched: a
 *     client that reads its results slowly cannot make finished work pile up without bound.</li>
 * </ul>
 * Scheduler thread only; no I/O.
 */
final class MemoryBudget {
    private static final Logger log = LoggerFactory.getLogger(Scheduler.class);

    private final long budgetBytes;
    private boolean refusing;
    private boolean holdingDispatch;
    private long refusedBundles;

    MemoryBudget(long budgetBytes) {
        this.budgetBytes = budgetBytes;
    }

    /** Updates both brakes from what is held now (at each bundle and at the end of each batch). */
    void check(long queuedBytes, long runningBytes, long retainedBytes) {
        long held = queuedBytes + runningBytes + retainedBytes;
        if (!refusing && held > budgetBytes) {
            refusing = true;
            log.warn("{} MiB held (queued {}, running {}, results awaiting acknowledgement {} MiB) exceed the budget "
                    + "of {} MiB: new bundles are refused with BUSY until it falls below 80%", held >> 20,
                    queuedBytes >> 20, runningBytes >> 20, retainedBytes >> 20, budgetBytes >> 20);
        } else if (refusing && held < budgetBytes * 8 / 10) {
            refusing = false;
            log.info("memory back to {} MiB: accepting bundles again ({} refused so far)", held >> 20, refusedBundles);
        }
        long mark = budgetBytes / 2;
        if (!holdingDispatch && retainedBytes > mark) {
            holdingDispatch = true;
            log.warn("{} MiB of results await acknowledgement (over half the budget of {} MiB): dispatching waits "
                    + "for clients to take them", retainedBytes >> 20, budgetBytes >> 20);
        } else if (holdingDispatch && retainedBytes < mark * 8 / 10) {
            holdingDispatch = false;
            log.info("results awaiting acknowledgement down to {} MiB: dispatching again", retainedBytes >> 20);
        }
    }

    /** Counts a bundle refused with BUSY. */
    void refused() {
        refusedBundles++;
    }

    long budgetBytes() {
        return budgetBytes;
    }

    boolean refusing() {
        return refusing;
    }

    boolean holdingDispatch() {
        return holdingDispatch;
    }

    long refusedBundles() {
        return refusedBundles;
    }
}
