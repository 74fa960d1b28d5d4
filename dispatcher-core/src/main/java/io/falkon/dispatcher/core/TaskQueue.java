package io.falkon.dispatcher.core;

import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The dispatcher's wait queue: an intrusive doubly-linked list of {@link Task}s in the order they
 * start. Between instances, <b>fair share</b> decides; within an instance, <b>its own priorities</b>
 * do. So a client's priority orders only its own work, and no client can take more than its share
 * by raising priorities (docs/cli.md, "Priorities and fair share").
 *
 * <p>Fair share is virtual time with a stride per instance: each queued task holds one of its
 * instance's <em>turns</em>, a key that is the instance's previous key (or, for an instance that
 * was idle, the key dispatching has got to: an idle instance saves no credit) plus its stride,
 * {@link #STRIDE_UNIT} divided by its share. The list is in key order (ties: the turn made first). So an
 * instance with a million tasks queued and one that comes later with a hundred alternate one for
 * one, and one with twice the share gets two turns for each of the other's.
 *
 * <p>An instance's turns go to its tasks in its own order: higher priority first, a task put back
 * for another attempt ahead of the others of its priority, the rest in the order submitted. A task
 * that goes ahead of some of its instance's queued tasks takes the earliest of their turns, and
 * each of them the next one of its instance's ({@link #reseat}): its instance's share of the
 * queue is unchanged, only which of its tasks goes first. That costs one step per task of the
 * instance it passes; a task at the default priority, of an instance using none other, passes
 * none, so the default path is the plain FIFO it always was: O(1) with one instance, a walk past
 * one task of each other instance with several.
 */
final class TaskQueue {
    /** A share of 1 is a stride of this many key units: shares down to 1/1000 and up to 10^6 stay exact enough. */
    static final long STRIDE_UNIT = 1_000_000L;

    /** One priority's run of an instance's own order. */
    private static final class Run {
        Task first;
        Task last;
        int count;
    }

    /** What the queue keeps of one instance: its tasks in its own order, by priority run, and its last turn. */
    static final class Own {
        Task first;
        Task last;
        final Run zero = new Run();
        /** Runs of the priorities other than 0 present, highest first; null until it uses one. */
        TreeMap<Integer, Run> runs;
        /** The key of its latest turn. */
        long lastKey;
    }

    private Task head;
    private Task tail;
    private int size;
    /** The key of the last turn taken for dispatch (the highest): where an idle instance starts again. */
    private long virtualTime;
    /** Orders turns of one key (instances of one share tie): the turn made first goes first. */
    private long turns;
    /** Queued tasks at priority 0, and at each other priority present. */
    private int atZero;
    private final Map<Integer, int[]> atOther = new HashMap<>();
    /** Told of two tasks that traded places and keys in {@link #reseat} (the window follows them). */
    private BiConsumer<Task, Task> swapped = (a, b) -> { };

    /** Hears of every two tasks a reseat made trade places (and keys). */
    void onSwapped(BiConsumer<Task, Task> listener) {
        this.swapped = listener;
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    Task head() {
        return head;
    }

    /** Queues {@code t} in its instance's next turn; returns whether it went to the tail of the queue. */
    boolean addLast(Task t) {
        Own own = own(t.instance);
        long key = Math.max(own.lastKey, virtualTime) + t.instance.stride();
        own.lastKey = key;
        t.fairKey = key;
        t.turn = ++turns;
        insertAfter(t, placeFor(t, own.last));
        if (ownPlace(own, t, false) != null) {
            reseat(t, true);
        }
        counted(t, 1);
        return t.next == null;
    }

    /**
     * Queues {@code t} (a task put back for another attempt: it has waited already) in a turn ahead of
     * every queued task, then in its place among its instance's tasks: ahead of those of its priority.
     */
    void addFirst(Task t) {
        Own own = own(t.instance);
        t.fairKey = (head == null ? virtualTime : Math.min(virtualTime, head.fairKey)) - 1; // strictly first
        t.turn = ++turns;
        insertBefore(t, head);
        ownPlace(own, t, true);
        if (t.qPrev != null) {
            reseat(t, false);
        }
        counted(t, 1);
    }

    /** {@code t} leaves the queue for an executor: the turn it held is taken, and dispatching has got to it. */
    void dispatched(Task t) {
        virtualTime = Math.max(virtualTime, t.fairKey);
        remove(t);
    }

    void remove(Task t) {
        if (!t.queued) {
            throw new IllegalStateException("task " + t.id + " is not queued");
        }
        unlinkOwn(t);
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
        counted(t, -1);
    }

    /**
     * Removes every queued task of {@code in}, in its own order, calling {@code leaving} for each while
     * it is still in place and {@code removed} once it is out.
     */
    void removeAll(Instance in, Consumer<Task> leaving, Consumer<Task> removed) {
        removeIf(in, t -> true, leaving, removed);
    }

    /** The same for the queued tasks of {@code in} that {@code which} accepts: O(the instance's queued tasks). */
    void removeIf(Instance in, Predicate<Task> which, Consumer<Task> leaving, Consumer<Task> removed) {
        Own own = in.queueOwn;
        for (Task t = own == null ? null : own.first; t != null; ) {
            Task next = t.qNext;
            if (which.test(t)) {
                leaving.accept(t);
                remove(t);
                removed.accept(t);
            }
            t = next;
        }
    }

    /** How many priorities have queued tasks (for the invariants and the status). */
    int levels() {
        return atOther.size() + (atZero > 0 ? 1 : 0);
    }

    /** How many queued tasks the queue counts at {@code priority}. */
    int countAt(int priority) {
        if (priority == 0) {
            return atZero;
        }
        int[] n = atOther.get(priority);
        return n == null ? 0 : n[0];
    }

    private void counted(Task t, int sign) {
        if (t.priority == 0) {
            atZero += sign;
            return;
        }
        int[] n = atOther.computeIfAbsent(t.priority, k -> new int[1]);
        n[0] += sign;
        if (n[0] == 0) {
            atOther.remove(t.priority);
        }
    }

    private static Own own(Instance in) {
        Own own = in.queueOwn;
        if (own == null) {
            own = new Own();
            in.queueOwn = own;
        }
        return own;
    }

    /**
     * Puts {@code t} in its instance's own order: after the tasks of its priority ({@code first}
     * false: a new task) or before them (true: a retry), in its priority's run. Returns the task of
     * the instance it went before when that is not where its turn is (it must be reseated), or null.
     */
    private static Task ownPlace(Own own, Task t, boolean first) {
        Run run = t.priority == 0 ? own.zero : runOf(own, t.priority);
        Task before;
        if (run.count > 0) {
            before = first ? run.first : run.last.qNext;
        } else {
            before = firstBelow(own, t.priority);
        }
        linkOwnBefore(own, t, before);
        if (run.count == 0) {
            run.first = run.last = t;
        } else if (first) {
            run.first = t;
        } else {
            run.last = t;
        }
        run.count++;
        return first ? null : before;
    }

    private static Run runOf(Own own, int priority) {
        if (own.runs == null) {
            own.runs = new TreeMap<>(Comparator.reverseOrder());
        }
        return own.runs.computeIfAbsent(priority, p -> new Run());
    }

    /** The first task of the instance's highest priority below {@code priority}, or null. */
    private static Task firstBelow(Own own, int priority) {
        Task best = priority > 0 && own.zero.count > 0 ? own.zero.first : null;
        int bestPriority = 0;
        if (own.runs != null) {
            for (Map.Entry<Integer, Run> e = own.runs.higherEntry(priority); e != null; e = own.runs.higherEntry(e.getKey())) {
                if (e.getValue().count > 0) {
                    if (best == null || e.getKey() > bestPriority) {
                        best = e.getValue().first;
                    }
                    break;
                }
            }
        }
        return best;
    }

    private static void linkOwnBefore(Own own, Task t, Task at) {
        if (at == null) {
            t.qPrev = own.last;
            t.qNext = null;
            if (own.last == null) {
                own.first = t;
            } else {
                own.last.qNext = t;
            }
            own.last = t;
        } else {
            t.qPrev = at.qPrev;
            t.qNext = at;
            if (at.qPrev == null) {
                own.first = t;
            } else {
                at.qPrev.qNext = t;
            }
            at.qPrev = t;
        }
    }

    private static void unlinkOwn(Task t) {
        Own own = t.instance.queueOwn;
        Run run = t.priority == 0 ? own.zero : own.runs.get(t.priority);
        if (--run.count == 0) {
            run.first = run.last = null;
            if (t.priority != 0) {
                own.runs.remove(t.priority);
            }
        } else if (run.first == t) {
            run.first = t.qNext;
        } else if (run.last == t) {
            run.last = t.qPrev;
        }
        if (t.qPrev == null) {
            own.first = t.qNext;
        } else {
            t.qPrev.qNext = t.qNext;
        }
        if (t.qNext == null) {
            own.last = t.qPrev;
        } else {
            t.qNext.qPrev = t.qPrev;
        }
        t.qPrev = null;
        t.qNext = null;
    }

    /**
     * Gives {@code t}'s instance's turns to its tasks in its own order again after {@code t} went in
     * out of turn: a new task (its turn the instance's last) ahead of the tasks now after it in its
     * instance's order ({@code later} true), or a retry (its turn ahead of all) behind those now
     * before it. {@code t} trades places and keys with each of them in turn, from the nearest turn,
     * so each of them moves one of its instance's turns along.
     */
    private void reseat(Task t, boolean later) {
        if (later) {
            for (Task x = t.instance.queueOwn.last; x != t; x = x.qPrev) {
                swapPlaces(t, x);
            }
        } else {
            for (Task x = t.instance.queueOwn.first; x != t; x = x.qNext) {
                swapPlaces(t, x);
            }
        }
    }

    /** Exchanges the places of {@code a} and {@code b} in the queue, and their turns: the turns stay in order. */
    private void swapPlaces(Task a, Task b) {
        long k = a.fairKey;
        a.fairKey = b.fairKey;
        b.fairKey = k;
        long n = a.turn;
        a.turn = b.turn;
        b.turn = n;
        Task aPrev = a.prev;
        Task aNext = a.next;
        Task bPrev = b.prev;
        Task bNext = b.next;
        if (aNext == b) { // a right before b
            link(aPrev, b);
            link(b, a);
            link(a, bNext);
        } else if (bNext == a) { // b right before a
            link(bPrev, a);
            link(a, b);
            link(b, aNext);
        } else {
            link(aPrev, b);
            link(b, aNext);
            link(bPrev, a);
            link(a, bNext);
        }
        swapped.accept(a, b);
    }

    /** Makes {@code b} follow {@code a} (either may be null: an end of the queue). */
    private void link(Task a, Task b) {
        if (a == null) {
            head = b;
        } else {
            a.next = b;
        }
        if (b == null) {
            tail = a;
        } else {
            b.prev = a;
        }
    }

    /**
     * The task {@code t} goes after: the last one ahead of it by key (ties: the older task first), or
     * null for the head. The walk starts at its instance's last queued task when that is ahead of it,
     * so it passes about one task of each other instance.
     */
    private Task placeFor(Task t, Task last) {
        Task after = last != null && ahead(last, t) ? last : null;
        Task next = after == null ? head : after.next;
        while (next != null && ahead(next, t)) {
            after = next;
            next = next.next;
        }
        return after;
    }

    /** Whether {@code a} starts before {@code b}: an earlier turn, or a turn of the same key made first. */
    static boolean ahead(Task a, Task b) {
        return a.fairKey != b.fairKey ? a.fairKey < b.fairKey : a.turn < b.turn;
    }

    private void insertBefore(Task t, Task at) {
        if (at == null) {
            link(tail, t);
            t.next = null;
            tail = t;
        } else {
            link(at.prev, t);
            link(t, at);
        }
        t.queued = true;
        size++;
    }

    private void insertAfter(Task t, Task at) {
        insertBefore(t, at == null ? head : at.next);
    }
}
