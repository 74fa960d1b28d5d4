package io.falkon.dispatcher.core;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * When each dispatched task is presumed lost: an index ordered by deadline (monotonic tick) and
 * task id. A task is in it exactly while it sits on an executor with a dispatch timeout; it leaves
 * the index the moment it leaves the executor, so a finished task is not kept reachable until its
 * deadline would have passed.
 */
final class Deadlines {
    private final TreeSet<Task> byDeadline = new TreeSet<>((a, b) -> a.deadlineTick != b.deadlineTick
            ? Long.compare(a.deadlineTick, b.deadlineTick) : Long.compare(a.id, b.id));

    void add(Task t, long tick) {
        remove(t);
        t.deadlineTick = tick;
        t.hasDeadline = true;
        byDeadline.add(t);
    }

    void remove(Task t) {
        if (t.hasDeadline) {
            byDeadline.remove(t);
            t.hasDeadline = false;
        }
    }

    /** Removes and returns, oldest first, every task whose deadline is at or before {@code tick}. */
    List<Task> expired(long tick) {
        List<Task> out = null;
        while (!byDeadline.isEmpty() && byDeadline.first().deadlineTick <= tick) {
            Task t = byDeadline.pollFirst();
            t.hasDeadline = false;
            (out == null ? out = new ArrayList<>() : out).add(t);
        }
        return out == null ? List.of() : out;
    }

    int size() {
        return byDeadline.size();
    }
}
