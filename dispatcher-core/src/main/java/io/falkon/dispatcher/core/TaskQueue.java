package io.falkon.dispatcher.core;

import java.util.function.Consumer;
import java.util.function.Predicate;

/** The dispatcher's FIFO wait queue: an intrusive doubly-linked list of {@link Task}s. */
final class TaskQueue {
    private Task head;
    private Task tail;
    private int size;

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    Task head() {
        return head;
    }

    void addLast(Task t) {
        t.prev = tail;
        t.next = null;
        if (tail == null) {
            head = t;
        } else {
            tail.next = t;
        }
        tail = t;
        t.queued = true;
        size++;
    }

    void addFirst(Task t) {
        t.prev = null;
        t.next = head;
        if (head == null) {
            tail = t;
        } else {
            head.prev = t;
        }
        head = t;
        t.queued = true;
        size++;
    }

    void remove(Task t) {
        if (!t.queued) {
            throw new IllegalStateException("task " + t.id + " is not queued");
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
}
