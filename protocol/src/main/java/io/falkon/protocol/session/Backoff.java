package io.falkon.protocol.session;

import java.util.concurrent.ThreadLocalRandom;

/**
 * How long to wait before dialling again: exponential from {@code first} to {@code max}, each wait
 * drawn at random from its upper half so that many peers that lost the same dispatcher do not all
 * come back in the same millisecond.
 */
public final class Backoff {
    /** 100 ms doubling to 5 s: what executors and clients use. */
    public static final Backoff DEFAULT = new Backoff(100, 5000);

    private final long firstMillis;
    private final long maxMillis;

    public Backoff(long firstMillis, long maxMillis) {
        if (firstMillis < 1 || maxMillis < firstMillis) {
            throw new IllegalArgumentException("backoff must be 1 <= first <= max");
        }
        this.firstMillis = firstMillis;
        this.maxMillis = maxMillis;
    }

    /** The wait before attempt {@code attempt} (0 for the first retry). */
    public long delayMillis(int attempt) {
        long base = Math.min(maxMillis, firstMillis << Math.min(attempt, 20));
        return base / 2 + ThreadLocalRandom.current().nextLong(base / 2 + 1);
    }
}
