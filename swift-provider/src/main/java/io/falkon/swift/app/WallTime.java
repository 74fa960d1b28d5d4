package io.falkon.swift.app;

import java.time.Duration;

/**
 * Swift's {@code maxwalltime} as the CoG Kit writes wall times: {@code MM}, {@code HH:MM},
 * {@code HH:MM:SS} or {@code DD:HH:MM:SS} (a bare number is minutes).
 */
public final class WallTime {
    private WallTime() {
    }

    /** @throws IllegalArgumentException naming the value when it is not a wall time */
    public static Duration parse(String value) {
        String v = value == null ? "" : value.trim();
        String[] parts = v.split(":", -1);
        if (v.isEmpty() || parts.length > 4) {
            throw bad(value);
        }
        long[] n = new long[parts.length];
        for (int i = 0; i < parts.length; i++) {
            if (!parts[i].matches("\\d{1,9}")) {
                throw bad(value);
            }
            n[i] = Long.parseLong(parts[i]);
        }
        long seconds = switch (parts.length) {
            case 1 -> n[0] * 60;
            case 2 -> n[0] * 3600 + n[1] * 60;
            case 3 -> n[0] * 3600 + n[1] * 60 + n[2];
            default -> n[0] * 86_400 + n[1] * 3600 + n[2] * 60 + n[3];
        };
        if (seconds <= 0) {
            throw bad(value);
        }
        return Duration.ofSeconds(seconds);
    }

    private static IllegalArgumentException bad(String value) {
        return new IllegalArgumentException("maxwalltime '" + value + "' is not a wall time (MM, HH:MM, HH:MM:SS "
                + "or DD:HH:MM:SS)");
    }
}
