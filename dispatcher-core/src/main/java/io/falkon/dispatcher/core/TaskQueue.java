package io.falkon.dispatcher.core;

import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The dispatcher's wait queue: an intrusive doubly-linked list of {@link Task}s in the order they
 * start. Higher priorities first; within a priority, the instances share the executors in turn
 * (fair share, equal shares), and each instance's tasks go in the order it submitted them.
 *
 * <p>Fair share is virtual time: each priority keeps the key of the last task taken from it for
 * dispatch; a task queued by an instance gets the key after both that and its instance's previous
 * key there, and the tasks of a priority are kept in key order (ties: the one queued first). So an
 * instance that queues a million tasks gets keys 1..1,000,000, and one that comes later with 100
 * gets keys starting where dispatching has got to, interleaved one for one with the first's
 * instead of behind all of them. An idle instance saves no credit: its next key is never behind
 * the current one. A task put back for another attempt goes ahead of every task of its priority.
 *
 * <p>Each priority present is a run of the list; the queue keeps where each run ends, so that
 * adding a task of the only instance at the default priority is O(1) (the default costs nothing
 * more than a FIFO), and O(instances) with several.
 */
final class TaskQueue {
    /** Past this many priorities besides 0, an instance's remembered turns are forgotten (see {@link #setLastKey}). */
    static final int MAX_PRIORITIES_REMEMBERED = 64;

    /** One priority's run of the list. */
    private static final class Level {
        Task first;
        Task last;
        int count;
        /** The key of the last task taken from this priority for dispatch. */
        long virtualTime;
    }

    private Task head;
    private Task tail;
    private int size;
    /** The priority-0 run (kept apart: no map lookup on the default path). */
    private final Level zero = new Level();
    /** The runs of other priorities present, highest first. */
    private final TreeMap<Integer, Level> levels = new TreeMap<>(Comparator.reverseOrder());
    /** The highest virtual time of any priority: where a priority that appears again starts. */
    private long latestTime;

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    Task head() {
        return head;
    }

    /**
     * Queues {@code t} after the tasks its instance queued before at its priority, in its turn among
     * the other instances'; returns whether it went to the tail of the queue.
     */
    boolean addLast(Task t) {
        Level level = level(t.priority);
        if (level == null) {
            level = newLevel(t.priority);
        }
        long key = Math.max(lastKey(t.instance, t.priority), level.virtualTime) + 1;
        t.fairKey = key;
        if (level.count == 0) {
            insertBefore(t, firstBelow(t.priority));
            level.first = level.last = t;
        } else if (level.last.fairKey <= key) {
            insertAfter(t, level.last); // the only instance, or its turn is last: the common case
            level.last = t;
        } else {
            Task after = placeFor(t, level);
            if (after == null) {
                insertBefore(t, level.first);
                level.first = t;
            } else {
                insertAfter(t, after);
            }
        }
        level.count++;
        setLastKey(t.instance, t, key);
        return t.next == null;
    }

    /** Queues {@code t} ahead of every task of its priority (a retry: it has waited already). */
    void addFirst(Task t) {
        Level level = level(t.priority);
        if (level == null) {
            level = newLevel(t.priority);
        }
        if (level.count == 0) {
            t.fairKey = level.virtualTime;
            insertBefore(t, firstBelow(t.priority));
            level.first = level.last = t;
        } else {
            t.fairKey = Math.min(level.virtualTime, level.first.fairKey);
            insertBefore(t, level.first);
            level.first = t;
        }
        level.count++;
    }

    /** {@code t} leaves the queue for an executor: its priority's virtual time moves up to it. */
    void dispatched(Task t) {
        Level level = level(t.priority);
        if (level != null && t.fairKey > level.virtualTime) {
            level.virtualTime = t.fairKey;
            latestTime = Math.max(latestTime, t.fairKey);
        }
        remove(t);
    }

    void remove(Task t) {
        if (!t.queued) {
            throw new IllegalStateException("task " + t.id + " is not queued");
        }
        Level level = level(t.priority);
        if (--level.count == 0) {
            level.first = level.last = null;
            if (t.priority != 0) {
                levels.remove(t.priority);
            }
        } else if (level.first == t) {
            level.first = t.next;
        } else if (level.last == t) {
            level.last = t.prev;
        }
        if (t.prev == null) {
            head = t.next;
        } else {
            t.prev.next = t.next;
        }
        if (t.next == null) {
            tail = t.prev;
        } else {
            t.next.prev = t.prev;
        }
        t.prev = null;
        t.next = null;
        t.queued = false;
        size--;
    }

    /**
     * Removes every task matching {@code filter}, in queue order, calling {@code leaving} for each
     * while it is still in place and {@code removed} once it is out.
     */
    void removeIf(Predicate<Task> filter, Consumer<Task> leaving, Consumer<Task> removed) {
        Task t = head;
        while (t != null) {
            Task next = t.next;
            if (filter.test(t)) {
                leaving.accept(t);
                remove(t);
                removed.accept(t);
            }
            t = next;
        }
    }

    /** How many priorities have queued tasks (for the invariants). */
    int levels() {
        return levels.size() + (zero.count > 0 ? 1 : 0);
    }

    /** How many queued tasks the queue counts at {@code priority} (for the invariants). */
    int countAt(int priority) {
        Level level = level(priority);
        return level == null ? 0 : level.count;
    }

    private Level level(int priority) {
        return priority == 0 ? zero : levels.get(priority);
    }

    /** A priority that has no queued task: its virtual time starts at the latest, so no instance's key is stale. */
    private Level newLevel(int priority) {
        Level level = new Level();
        level.virtualTime = latestTime;
        levels.put(priority, level);
        return level;
    }

    private static long lastKey(Instance in, int priority) {
        if (priority == 0) {
            return in.lastFairKey;
        }
        Long k = in.otherFairKeys == null ? null : in.otherFairKeys.get(priority);
        return k == null ? 0 : k;
    }

    private static void setLastKey(Instance in, Task t, long key) {
        if (t.priority == 0) {
            in.lastFairKey = key;
            in.lastQueued = t;
        } else {
            if (in.otherFairKeys == null) {
                in.otherFairKeys = new HashMap<>();
            } else if (in.otherFairKeys.size() >= MAX_PRIORITIES_REMEMBERED && !in.otherFairKeys.containsKey(t.priority)) {
                // an instance that uses ever new priorities does not grow this without bound; forgetting
                // only lets its next task at a forgotten priority start from the current turn
                in.otherFairKeys.clear();
            }
            in.otherFairKeys.put(t.priority, key);
        }
    }

    /**
     * The task of {@code t}'s priority that {@code t} goes after: the last one whose key is not
     * above {@code t}'s, or null for the head of the priority. The walk starts at the instance's
     * previous task when it is still queued there, so it passes one task of each other instance.
     */
    private Task placeFor(Task t, Level level) {
        Task start = t.priority == 0 ? t.instance.lastQueued : null;
        Task after = start != null && start.queued && start.priority == 0 && start.fairKey <= t.fairKey ? start : null;
        Task next = after == null ? level.first : after.next;
        while (next != null && next.priority == t.priority && next.fairKey <= t.fairKey) {
            after = next;
            next = next.next;
        }
        return after;
    }

    /** The first task of the highest priority present below {@code priority}, or null: where a new run goes. */
    private Task firstBelow(int priority) {
        Map.Entry<Integer, Level> below = levels.higherEntry(priority); // the next lower priority present
        while (below != null && below.getValue().count == 0) {
            below = levels.higherEntry(below.getKey());
        }
        if (priority > 0 && zero.count > 0 && (below == null || below.getKey() < 0)) {
            return zero.first;
        }
        return below == null ? null : below.getValue().first;
    }

    private void insertBefore(Task t, Task at) {
        if (at == null) {
            t.prev = tail;
            t.next = null;
            if (tail == null) {
                head = t;
            } else {
                tail.next = t;
            }
            tail = t;
        } else {
            t.prev = at.prev;
            t.next = at;
            if (at.prev == null) {
                head = t;
            } else {
                at.prev.next = t;
            }
            at.prev = t;
        }
        t.queued = true;
        size++;
    }

    private void insertAfter(Task t, Task at) {
        insertBefore(t, at.next);
    }
}
