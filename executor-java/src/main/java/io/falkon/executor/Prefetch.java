package io.falkon.executor;

/**
 * How many tasks an executor holds beyond its free slots, so that a slot that finishes a short task
 * starts the next one at once instead of waiting a round trip to the dispatcher. Either fixed
 * ({@code --prefetch N}) or automatic (the default):
 * <ul>
 *   <li>nothing at first, and nothing while tasks are long: the dispatcher keeps every task until a
 *       slot is free, so long tasks spread over all executors;</li>
 *   <li>once the tasks are seen to be short (a running mean under {@value #SHORT_MILLIS} ms), about
 *       {@value #COVER_MILLIS} ms of work per slot: {@code ceil(cover / mean)}, from 1 to
 *       {@value #MAX_PER_SLOT} per slot. That covers a round trip to the dispatcher with room to
 *       spare, and lets results linger for company ({@link ResultBatcher}): with a cover of one
 *       round trip (4 ms) /bin/true returned about 6 results a frame, and every frame costs the
 *       dispatcher, its client and their threads a handful of wake-ups and system calls (measured:
 *       about 150 µs of the dispatcher JVM's CPU per task in {@code falkon run}, a fifth of a core);
 *       holding 20 ms of work made the frames several times larger and the run faster, and 40 ms
 *       (with results lingering up to 20 ms) halved the frames again and the dispatcher's CPU per
 *       task with them;</li>
 *   <li>nothing on an executor with a data cache: the data-aware policies place each task when a
 *       slot frees, where its data is, and a task held here could not go elsewhere.</li>
 * </ul>
 * The change travels with the credits of the next RESULT (more credits, or fewer returned).
 * Thread-safe.
 */
final class Prefetch {
    /** The option value that asks for the automatic behaviour. */
    static final int AUTO = -1;
    static final double SHORT_MILLIS = 100;
    static final double COVER_MILLIS = 40;
    static final int MAX_PER_SLOT = 64;
    /** Results seen before the mean is trusted. */
    private static final int WARM_UP = 8;

    private final int slots;
    private final int fixed;
    private final boolean hasCache;
    private int granted;
    private double meanMillis;
    private long samples;

    /** @param prefetch a fixed value, or {@link #AUTO} */
    Prefetch(int prefetch, int slots, boolean hasCache) {
        this.fixed = prefetch;
        this.slots = slots;
        this.hasCache = hasCache;
        this.granted = initial();
    }

    boolean auto() {
        return fixed == AUTO;
    }

    /** Extra credits granted when registering. */
    int initial() {
        return auto() ? 0 : fixed;
    }

    /** A new connection: registration grants {@link #initial()} again. */
    synchronized void reset() {
        granted = initial();
    }

    /** Extra credits granted now (beyond the slots). */
    synchronized int current() {
        return granted;
    }

    /** A task ran for {@code micros}. */
    synchronized void finished(long micros) {
        double ms = Math.max(0, micros) / 1000.0;
        samples++;
        meanMillis = samples == 1 ? ms : meanMillis + (ms - meanMillis) * 0.1;
    }

    synchronized int target() {
        if (!auto()) {
            return fixed;
        }
        if (hasCache || samples < WARM_UP || meanMillis >= SHORT_MILLIS) {
            return 0;
        }
        int perSlot = meanMillis <= COVER_MILLIS / MAX_PER_SLOT ? MAX_PER_SLOT
                : (int) Math.ceil(COVER_MILLIS / meanMillis);
        return slots * Math.max(1, Math.min(MAX_PER_SLOT, perSlot));
    }

    /**
     * The change to add to the credits of a RESULT returning {@code returning} credits: positive to
     * grant more, negative (never below {@code -returning}) to hold some back.
     */
    synchronized int adjust(int returning) {
        int delta = Math.max(target() - granted, -returning);
        granted += delta;
        return delta;
    }
}
