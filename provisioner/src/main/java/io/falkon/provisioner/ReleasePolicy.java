package io.falkon.provisioner;

import java.time.Duration;

/**
 * When nodes go back (Falkon SC07 §3.1).
 *
 * @param centralized false: distributed — each executor leaves after {@code idle} without work
 *                    ({@code --idle-exit}) and an allocation ends when all its executors have gone;
 *                    true: centralized — the provisioner cancels allocations whose executors are
 *                    all idle once the queue has stayed below {@code queueBelow} for {@code idle}
 * @param idle        the idle time; {@link Duration#ZERO} for never (allocations last their wall time)
 * @param queueBelow  the centralized policy's queue threshold
 */
public record ReleasePolicy(boolean centralized, Duration idle, long queueBelow) {

    public static ReleasePolicy distributed(Duration idle) {
        return new ReleasePolicy(false, idle, 0);
    }

    public static ReleasePolicy centralized(Duration idle, long queueBelow) {
        return new ReleasePolicy(true, idle, queueBelow);
    }

    public boolean never() {
        return idle.isZero();
    }
}
