package io.falkon.dispatcher.journal;

/** When the journal forces its writes to disk (docs/reliability.md). */
public enum FsyncPolicy {
    /**
     * Every batch is written and fsynced before any reply of that batch is sent: an acknowledged
     * submission survives a power failure. Batches that arrive during an fsync share the next one
     * (group commit).
     */
    ALWAYS,
    /**
     * Written before the replies are sent, fsynced at most every 50 ms: survives a crash of the
     * dispatcher process (the data is in the kernel), may lose the last 50 ms on a power failure.
     */
    BATCH,
    /** Written before the replies are sent, never fsynced by the journal: the kernel decides. */
    NEVER
}
