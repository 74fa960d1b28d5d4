package io.falkon.provisioner;

import java.util.Locale;
import java.util.function.ToIntFunction;

/**
 * How many nodes to ask for when the queue holds more work than the executors (registered and on
 * their way) can take (Falkon SC07 §3.1). Asked once per decision; the answer is capped by the
 * provisioner's bounds and by what the queue needs.
 */
public interface AcquisitionPolicy {

    /** What the policy knows when it decides. */
    record Demand(int neededNodes, int lastRequestNodes, int requestsSoFar, long queuedCores, int slotsPerNode,
                  double meanTaskSeconds, long allocationSeconds) {
    }

    String name();

    /** Nodes to request now (at least 1; the caller caps it at {@code neededNodes} and the bounds). */
    int nodes(Demand d);

    /** One node per request. */
    AcquisitionPolicy ONE_AT_A_TIME = named("one-at-a-time", d -> 1);

    /** 1, 2, 3, ... nodes: each request one more than the last. */
    AcquisitionPolicy ADDITIVE = named("additive", d -> d.lastRequestNodes() + 1);

    /** 1, 2, 4, 8, ... nodes: each request twice the last. */
    AcquisitionPolicy EXPONENTIAL = named("exponential", d -> Math.max(1, 2 * d.lastRequestNodes()));

    /** Everything the queue needs, in one request. */
    AcquisitionPolicy ALL_AT_ONCE = named("all-at-once", Demand::neededNodes);

    /**
     * The fewest nodes that finish the queued work within one allocation's wall time, from the mean
     * task time: {@code ceil(queuedCores × meanTaskSeconds / (slotsPerNode × allocationSeconds))}. Fewer
     * nodes than all-at-once when tasks are short (one node gets through many), as many when they
     * are long.
     */
    AcquisitionPolicy OPTIMAL = named("optimal", d -> (int) Math.min(Integer.MAX_VALUE, Math.max(1, (long) Math.ceil(
            d.queuedCores() * d.meanTaskSeconds() / ((double) d.slotsPerNode() * Math.max(1, d.allocationSeconds()))))));

    /** The policy called {@code name} (one-at-a-time, additive, exponential, all-at-once, optimal). */
    static AcquisitionPolicy byName(String name) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "one-at-a-time", "one" -> ONE_AT_A_TIME;
            case "additive" -> ADDITIVE;
            case "exponential" -> EXPONENTIAL;
            case "all-at-once", "all" -> ALL_AT_ONCE;
            case "optimal" -> OPTIMAL;
            default -> throw new IllegalArgumentException("unknown acquisition policy '" + name
                    + "' (one-at-a-time, additive, exponential, all-at-once, optimal)");
        };
    }

    private static AcquisitionPolicy named(String name, ToIntFunction<Demand> rule) {
        return new AcquisitionPolicy() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public int nodes(Demand d) {
                return rule.applyAsInt(d);
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }
}
