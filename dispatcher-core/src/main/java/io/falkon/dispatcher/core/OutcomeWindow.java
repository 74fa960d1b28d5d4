package io.falkon.dispatcher.core;

import java.util.Arrays;

/**
 * An executor's recent outcomes, counted in a sliding window of fixed buckets (six per window), so
 * that keeping it costs the same at 1 task per minute and 100,000 per second.
 */
final class OutcomeWindow {
    private static final int BUCKETS = 6;
    private final long bucketMicros;
    private final long[] bucketStart = new long[BUCKETS];
    private final int[] failures = new int[BUCKETS];
    private final int[] total = new int[BUCKETS];
    long lastSuccessMicros = Long.MIN_VALUE;

    OutcomeWindow(long windowMicros) {
        this.bucketMicros = Math.max(1, windowMicros / BUCKETS);
    }

    void record(long nowMicros, boolean failed) {
        int b = (int) ((nowMicros / bucketMicros) % BUCKETS);
        long start = nowMicros / bucketMicros * bucketMicros;
        if (bucketStart[b] != start) {
            bucketStart[b] = start;
            failures[b] = 0;
            total[b] = 0;
        }
        total[b]++;
        if (failed) {
            failures[b]++;
        } else {
            lastSuccessMicros = nowMicros;
        }
    }

    private boolean live(int b, long nowMicros) {
        return bucketStart[b] > nowMicros - BUCKETS * bucketMicros;
    }

    int failures(long nowMicros) {
        int n = 0;
        for (int b = 0; b < BUCKETS; b++) {
            if (live(b, nowMicros)) {
                n += failures[b];
            }
        }
        return n;
    }

    int total(long nowMicros) {
        int n = 0;
        for (int b = 0; b < BUCKETS; b++) {
            if (live(b, nowMicros)) {
                n += total[b];
            }
        }
        return n;
    }

    void clear() {
        Arrays.fill(bucketStart, 0);
        Arrays.fill(failures, 0);
        Arrays.fill(total, 0);
    }
}
