package io.falkon.dispatcher.core;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The scheduling window of the data-aware policies: the first {@code size} queued tasks (in queue
 * order), each placed on a list: the executor that caches the most of its inputs, or "unplaced"
 * when no executor caches any. Placement is computed when a task enters the window and checked
 * again against the current index when a policy asks for a task (the index changes all the time),
 * so a task is only handed to the executor that is best for it now. Each list is in queue order
 * (turn, then age: {@link #ahead}), which makes "the first task best placed on this executor"
 * O(1) amortized instead of a scan of the whole window.
 */
final class Window {
    /** A task's membership of a list (only window tasks have one). */
    static final class Node {
        final Task task;
        TaskList list;
        Node prev;
        Node next;

        Node(Task task) {
            this.task = task;
        }
    }

    /** Whether {@code a} starts before {@code b} in the queue's order: an earlier turn, or older ({@link TaskQueue#ahead}). */
    static boolean ahead(Task a, Task b) {
        return TaskQueue.ahead(a, b);
    }

    /** A doubly linked list of nodes in queue order. */
    static final class TaskList {
        Node head;
        Node tail;

        void insertInOrder(Node n) {
            n.list = this;
            Node after = tail;
            while (after != null && ahead(n.task, after.task)) {
                after = after.prev; // a retried task is older than what is listed, an urgent one ahead of it
            }
            n.prev = after;
            n.next = after == null ? head : after.next;
            if (n.next != null) {
                n.next.prev = n;
            } else {
                tail = n;
            }
            if (after != null) {
                after.next = n;
            } else {
                head = n;
            }
        }

        void remove(Node n) {
            if (n.prev == null) {
                head = n.next;
            } else {
                n.prev.next = n.next;
            }
            if (n.next == null) {
                tail = n.prev;
            } else {
                n.next.prev = n.prev;
            }
            n.prev = null;
            n.next = null;
            n.list = null;
        }
    }

    private final CacheIndex index;
    private final Map<ExecutorState, TaskList> preferred = new HashMap<>();
    private final TaskList unplaced = new TaskList();
    private int size;
    private int admitted;
    /** The first queued task not yet in the window, or null when all are. */
    private Task admitNext;

    Window(CacheIndex index, int size) {
        this.index = index;
        this.size = size;
    }

    void resize(int newSize) {
        size = Math.max(1, newSize);
    }

    int size() {
        return size;
    }

    int admitted() {
        return admitted;
    }

    /**
     * A task entered the queue: it is the next to admit if it comes before the one that was (a
     * higher priority, an earlier turn), or if every other queued task is admitted already.
     */
    void queued(Task t) {
        if (t.windowNode == null && (admitNext == null || ahead(t, admitNext))) {
            admitNext = t;
        }
    }

    /**
     * Two queued tasks of one instance traded places and turns (the queue reseated its tasks in its
     * own order): the next task to admit stays at its place in the queue, a task that came ahead of
     * it unadmitted is the next to admit, and the lists stay in queue order.
     */
    void swapped(Task a, Task b) {
        if (admitNext == a) {
            admitNext = b;
        } else if (admitNext == b) {
            admitNext = a;
        }
        for (Task x : new Task[]{a, b}) {
            Node n = x.windowNode;
            if (n != null) {
                TaskList list = n.list;
                list.remove(n);
                list.insertInOrder(n);
            } else if (admitNext == null || ahead(x, admitNext)) {
                admitNext = x;
            }
        }
    }

    /** A task was put back at the head of the queue (a retry): it belongs in the window now. */
    void prepended(Task t) {
        admit(t);
    }

    /** A task left the queue (dispatched or cancelled). */
    void removed(Task t) {
        if (admitNext == t) {
            admitNext = t.next;
        }
        Node n = t.windowNode;
        if (n != null) {
            n.list.remove(n);
            t.windowNode = null;
            admitted--;
        }
    }

    /** Brings queued tasks into the window until it is full. */
    void fill() {
        while (admitted < size && admitNext != null) {
            Task t = admitNext;
            admitNext = t.next;
            if (t.windowNode == null) {
                admit(t);
            }
        }
    }

    private void admit(Task t) {
        Node n = new Node(t);
        t.windowNode = n;
        admitted++;
        place(n);
    }

    private void place(Node n) {
        Task t = n.task;
        // a retry is not placed on an executor it failed on: it would wait there for nothing
        ExecutorState best = t.inputIds == null ? null
                : index.best(t.inputIds, t.inputSizes, x -> x.eligible() && !t.avoids(x));
        TaskList target = best == null ? unplaced : preferred.computeIfAbsent(best, k -> new TaskList());
        if (n.list != target) {
            if (n.list != null) {
                n.list.remove(n);
            }
            target.insertInOrder(n);
        }
    }

    /** How many tasks of one list {@link #bestFor} passes over that {@code e} must not take. */
    static final int LOOKAHEAD = 16;

    /**
     * The first window task (in queue order) to run on {@code e} under max-cache-hit: one that {@code e} caches the
     * most of, or one that no executor caches any of, and that {@code refused} does not rule out (a
     * retry avoiding {@code e}). {@code null} if there is none.
     */
    Task bestFor(ExecutorState e, Predicate<Task> refused) {
        Task mine = firstValid(preferred.get(e), refused);
        Task anyone = firstValid(unplaced, refused);
        if (mine == null) {
            return anyone;
        }
        return anyone == null || ahead(mine, anyone) ? mine : anyone;
    }

    /**
     * The first task of {@code list} that still belongs there and is not refused; tasks that no
     * longer belong move on to their list.
     */
    private Task firstValid(TaskList list, Predicate<Task> refused) {
        if (list == null) {
            return null;
        }
        int skipped = 0;
        Node n = list.head;
        while (n != null) {
            Node next = n.next;
            place(n);
            if (n.list == list) {
                if (!refused.test(n.task)) {
                    return n.task;
                }
                if (++skipped > LOOKAHEAD) {
                    return null;
                }
            }
            n = next;
        }
        return null;
    }

    /** Everything {@code e} was preferred for becomes unplaced-or-elsewhere (it left or was suspended). */
    void executorGone(ExecutorState e) {
        TaskList l = preferred.remove(e);
        while (l != null && l.head != null) {
            Node n = l.head;
            l.remove(n);
            place(n);
        }
    }

    /** Places again every task preferring {@code e} (its cache lost objects). */
    void replaceAll(ExecutorState e) {
        TaskList l = preferred.get(e);
        if (l == null) {
            return;
        }
        Node n = l.head;
        while (n != null) {
            Node next = n.next;
            place(n);
            n = next;
        }
    }
}
