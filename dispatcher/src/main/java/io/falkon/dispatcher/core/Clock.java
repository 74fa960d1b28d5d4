package io.falkon.dispatcher.core;

import java.time.Instant;

/** The scheduler's time source; tests substitute a fake. */
@FunctionalInterface
public interface Clock {

    /** Microseconds since the Unix epoch. */
    long nowMicros();

    Clock SYSTEM = () -> {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1000;
    };
}
