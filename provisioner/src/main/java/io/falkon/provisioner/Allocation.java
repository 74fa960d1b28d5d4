package io.falkon.provisioner;

import java.util.EnumMap;
import java.util.Map;

/**
 * One request to the scheduler and what became of it: requested → queued → running → registered
 * (all its executors have registered with the dispatcher) → released, each stage with the time it
 * was first seen. Owned by the {@link Planner}; read-only for everyone else.
 */
public final class Allocation {

    public enum Stage { REQUESTED, QUEUED, RUNNING, REGISTERED, RELEASED }

    private final String name;
    private final int nodes;
    private final int executors;
    private final String jobId;
    private final Map<Stage, Long> at = new EnumMap<>(Stage.class);
    private Stage stage;
    private int registered;
    private int maxRegistered;
    private boolean cancelled;
    private long idleSince = -1;

    Allocation(String name, int nodes, int executors, String jobId, long nowMillis) {
        this.name = name;
        this.nodes = nodes;
        this.executors = executors;
        this.jobId = jobId;
        reach(Stage.REQUESTED, nowMillis);
    }

    void reach(Stage s, long nowMillis) {
        if (stage != null && s.ordinal() <= stage.ordinal()) {
            return;
        }
        for (Stage t : Stage.values()) {
            if (t.ordinal() <= s.ordinal() && !at.containsKey(t) && (t == s || t != Stage.REGISTERED)) {
                at.put(t, nowMillis); // a stage skipped between polls happened no later than now
            }
        }
        stage = s;
    }

    void registered(int n) {
        registered = n;
        maxRegistered = Math.max(maxRegistered, n);
    }

    void busy(boolean busy, long nowMillis) {
        if (busy) {
            idleSince = -1;
        } else if (idleSince < 0) {
            idleSince = nowMillis;
        }
    }

    /**
     * The executors it runs once started: one per node, or with a dispatcher per allocation one per
     * node but the dispatcher's (a one-node allocation runs both).
     */
    public int executors() {
        return executors;
    }

    /** Since when none of its executors has run anything (planner's clock), or -1 while one does. */
    public long idleSince() {
        return idleSince;
    }

    void cancelled() {
        cancelled = true;
    }

    public String name() {
        return name;
    }

    public int nodes() {
        return nodes;
    }

    public String jobId() {
        return jobId;
    }

    public Stage stage() {
        return stage;
    }

    public boolean active() {
        return stage != Stage.RELEASED;
    }

    /** Its executors registered with the dispatcher now. */
    public int registered() {
        return registered;
    }

    /** The most of its executors ever registered at once. */
    public int maxRegistered() {
        return maxRegistered;
    }

    public boolean cancelRequested() {
        return cancelled;
    }

    /** When it reached {@code s} (milliseconds, the planner's clock), or -1 if it has not. */
    public long at(Stage s) {
        return at.getOrDefault(s, -1L);
    }
}
