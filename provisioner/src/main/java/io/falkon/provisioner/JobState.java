package io.falkon.provisioner;

/** Where a batch job is, as its scheduler reports it. */
public enum JobState {
    /** Submitted, waiting for nodes. */
    QUEUED,
    /** Its nodes are allocated and its script runs. */
    RUNNING,
    /** Finished, failed, cancelled, or no longer known to the scheduler. */
    DONE
}
