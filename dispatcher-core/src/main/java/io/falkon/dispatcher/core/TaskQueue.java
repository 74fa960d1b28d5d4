package io.falkon.dispatcher.core;

import java.util.Comparator;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The dispatcher's wait queue: an intrusive doubly-linked list of {@link Task}s in the order they
 * start, by priority (higher first) and, within a priority, first in first out — a task put back
 * for another attempt goes to the head of its priority. Each priority present is a run of the
 * list; the queue keeps where each run ends, so that adding a task is O(1) while every task has
 * priority 0 (the default costs nothing more than a FIFO) and O(log levels) otherwise.
 */
final class TaskQueue {
    /** One priority's run of the list. */
    private static final class Level {
        Task first;
        Task last;
        int count;
    }

    private Task head;
    private Task tail;
    private int size;
    /** The priority-0 run (kept apart: no map lookup on the default path). */
    private final Level zero = new Level();
    /** The runs of other priorities present, highest first. */
    private final TreeMap<Integer, Level> levels = new TreeMap<>(Comparator.reverseOrder());

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    Task head() {
        return head;
    }

    /** Queues {@code t} after every task of its priority; returns whether it went to the tail of the queue. */
    boolean addLast(Task t) {
        Level level = level(t.priority);
        if (level != null && level.count > 0) {
            insertAfter(t, level.last);
            level.last = t;
        } else {
            insertBefore(t, firstBelow(t.priority));
            level = begin(t);
        }
        level.count++;
        return t.next == null;
    }

    /** Queues {@code t} ahead of every task of its priority (a retry: it has waited already). */
    void addFirst(Task t) {
        Level level = level(t.priority);
        if (level != null && level.count > 0) {
            insertBefore(t, level.first);
            level.first = t;
        } else {
            insertBefore(t, firstBelow(t.priority));
            level = begin(t);
        }
        level.count++;
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

    /** Removes every task matching {@code filter}, calling {@code removed} for each, in queue order. */
    void removeIf(Predicate<Task> filter, Consumer<Task> removed) {
        Task t = head;
        while (t != null) {
            Task next = t.next;
            if (filter.test(t)) {
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

    /** A new run, of {@code t} alone. */
    private Level begin(Task t) {
        Level level = t.priority == 0 ? zero : new Level();
        level.first = level.last = t;
        if (t.priority != 0) {
            levels.put(t.priority, level);
        }
        return level;
    }

    /** The first task of the highest priority present below {@code priority}, or null: where a new run goes. */
    private Task firstBelow(int priority) {
        Map.Entry<Integer, Level> below = levels.higherEntry(priority); // the next lower priority present
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
