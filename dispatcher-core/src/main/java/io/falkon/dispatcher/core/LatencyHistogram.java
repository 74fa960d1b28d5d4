package io.falkon.dispatcher.core;

import java.util.Arrays;

/**
 * Counts of durations in fixed buckets (cumulative upper bounds in seconds, as Prometheus
 * histograms have them), written on the scheduler thread without allocating and copied into each
 * {@link StatusSnapshot}. The bounds run from 50 µs (an idle dispatcher's dispatch) to an hour (a
 * task that waited for executors to be provisioned).
 */
public final class LatencyHistogram {
    /** Upper bounds in seconds; a last, implicit bucket holds everything above them. */
    public static final double[] BOUNDS = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
            0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600};

    private final long[] counts = new long[BOUNDS.length + 1];
    private long total;
    private double sumSeconds;

    /** Records one duration. Scheduler thread only. */
    void record(long micros) {
        double s = Math.max(0, micros) / 1e6;
        int i = Arrays.binarySearch(BOUNDS, s);
        counts[i >= 0 ? i : -i - 1]++;
        total++;
        sumSeconds += s;
    }

    Snapshot snapshot() {
        return new Snapshot(counts.clone(), total, sumSeconds);
    }

    /**
     * The counts at one moment: {@code counts[i]} durations fell in bucket {@code i} (at most
     * {@code BOUNDS[i]}, above the previous bound; the last bucket is above every bound).
     */
    public record Snapshot(long[] counts, long total, double sumSeconds) {
        public static final Snapshot EMPTY = new Snapshot(new long[BOUNDS.length + 1], 0, 0);

        /** How many durations were at most {@code BOUNDS[i]}. */
        public long cumulative(int i) {
            long c = 0;
            for (int k = 0; k <= i; k++) {
                c += counts[k];
            }
            return c;
        }
    }
}
