package io.falkon.protocol.time;

import java.time.Instant;

/**
 * The scheduler's time source; tests substitute a fake. Two readings: wall-clock time for the
 * timestamps clients see, and a monotonic tick for everything that measures an interval (dispatch
 * deadlines, leases, suspensions), so that a step of the wall clock expires nothing.
 */
@FunctionalInterface
public interface Clock {

    /** Microseconds since the Unix epoch (wall clock): for timestamps only. */
    long nowMicros();

    /**
     * A monotonic reading in microseconds with an arbitrary origin: for intervals. A fake clock that
     * only implements {@link #nowMicros()} moves both readings together.
     */
    default long tickMicros() {
        return nowMicros();
    }

    Clock SYSTEM = new Clock() {
        @Override
        public long nowMicros() {
            Instant now = Instant.now();
            return now.getEpochSecond() * 1_000_000L + now.getNano() / 1000;
        }

        @Override
        public long tickMicros() {
            return System.nanoTime() / 1000;
        }
    };
}
