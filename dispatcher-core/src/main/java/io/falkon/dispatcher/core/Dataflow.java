package io.falkon.dispatcher.core;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * One instance's dependencies by data, as AME/AMFS resolve them (seed 004 §V-C, §V-H): every key a
 * task of the instance produces (an object id its OUTPUTS declare, or its NAME) is either not yet
 * produced, with the tasks that wait for it (its subscribers), produced, or failed. A task whose
 * inputs or {@code after} names miss a key not yet produced waits, apart from the dispatch queue;
 * the producer's success releases its subscribers, each in O(1), and its failure fails them.
 *
 * <p>A key no task of the instance produces is not a dependency: an input of that id is read from
 * the shared store as always. Producers are registered when they are accepted, so a consumer must
 * be submitted after its producers (or after them in the same bundle). State is the scheduler
 * thread's, like everything in the core; {@link TaskLedger} moves tasks in and out of waiting and
 * keeps the counters.
 */
final class Dataflow {
    /** What became of a key once its producer finished. */
    enum State { PENDING, PRODUCED, FAILED }

    /** A key: its state, the task producing it while pending, and the tasks waiting for it. */
    static final class Key {
        /** The object id or the task name (the map's own key string: nothing more is kept per key). */
        final String id;
        final boolean isName;
        State state = State.PENDING;
        /** The producer while pending; after a failure, the client task id of the task that failed first upstream. */
        Task producer;
        long failedProducer;
        /** Subscribers: tasks waiting for this key (a task appears once per key it misses). */
        Task[] waiters;
        int waiting;
        /**
         * An intermediate object (a temporary output): it lives only in its holder's cache, held
         * there while {@link #readers} is above 0; the task that made it ({@link #origin}) runs again
         * when it is lost before they have all read it.
         */
        boolean temporary;
        Task origin;
        ExecutorState holder;
        /** Accepted tasks that read it and have not finished. */
        int readers;
        /** Times it was made again after being lost. */
        int reruns;
        /** Made again because it was lost (a failure of that rerun is reported as such). */
        boolean lost;

        Key(String id, boolean isName) {
            this.id = id;
            this.isName = isName;
        }

        /** How the DEPENDENCY ext names the key: the object id, or {@code after:NAME}. */
        String what() {
            return isName ? "after:" + id : id;
        }

        void subscribe(Task t) {
            if (waiters == null) {
                waiters = new Task[2];
            } else if (waiting == waiters.length) {
                waiters = java.util.Arrays.copyOf(waiters, waiting * 2);
            }
            waiters[waiting++] = t;
        }

        /** Takes the subscribers (they are the caller's to release or fail now). */
        Task[] take() {
            Task[] w = waiters;
            waiters = null;
            waiting = 0;
            return w;
        }
    }

    /** An instance's dataflow before its first producer: nothing is produced, no name taken. */
    static final Dataflow EMPTY = new Dataflow();

    /** Keys of object ids (OUTPUTS) and of task names (NAME), apart: a name is not an object id. */
    private final Map<String, Key> objects = new HashMap<>();
    private final Map<String, Key> names = new HashMap<>();
    /** The waiting tasks, an intrusive list through their nodes ({@link DataflowNode#waitPrev}/{@code waitNext}). */
    private Task head;
    private int waitingTasks;

    Key object(String id) {
        return objects.get(id);
    }

    Key name(String name) {
        return names.get(name);
    }

    /** Registers {@code t} as the producer of its outputs and its name (checked free before: {@link #conflict}). */
    void register(Task t) {
        DataflowNode f = t.flow;
        if (f.outputIds != null) {
            for (int i = 0; i < f.outputIds.length; i++) {
                Key k = objects.computeIfAbsent(f.outputIds[i], n -> new Key(n, false));
                k.producer = t;
                if (f.temporary != null && f.temporary[i]) {
                    k.temporary = true;
                    k.origin = t;
                }
            }
        }
        if (f.name != null) {
            names.computeIfAbsent(f.name, n -> new Key(n, true)).producer = t;
        }
    }

    /** A key restored from the journal: produced or failed by a task that has finished. */
    void restore(String id, boolean isName, State state, long failedProducer) {
        Key k = (isName ? names : objects).computeIfAbsent(id, n -> new Key(n, isName));
        k.state = state;
        k.failedProducer = failedProducer;
    }

    /** The keys a bundle declares, task by task, while it is checked (it is accepted whole or not at all). */
    static final class Declared {
        final java.util.Set<String> objects = new java.util.HashSet<>();
        final java.util.Set<String> names = new java.util.HashSet<>();
    }

    /**
     * Why a task of a bundle cannot join the instance, or null: a key it declares that another task
     * already produces, or an {@code after} name no task before it has. {@code declared} holds what
     * the bundle's earlier tasks declare; the task's own keys are added to it.
     */
    String problem(String[] outputIds, String name, String[] after, Declared declared) {
        if (after != null) {
            for (String n : after) {
                if (!names.containsKey(n) && !declared.names.contains(n)) {
                    return "after: no task named '" + n + "' was submitted to this instance before it";
                }
            }
        }
        if (outputIds != null) {
            for (String id : outputIds) {
                if (objects.containsKey(id) || !declared.objects.add(id)) {
                    return "object '" + id + "' already has a producer in this instance (one task per object id)";
                }
            }
        }
        if (name != null && (names.containsKey(name) || !declared.names.add(name))) {
            return "the name '" + name + "' is already taken in this instance";
        }
        return null;
    }

    /**
     * Subscribes {@code t} to every key it needs that is not produced yet; returns how many, or -1
     * (with {@code failed[0]} set to the key) when one of them failed: the task cannot run.
     */
    int subscribe(Task t, Key[] failed) {
        int missing = 0;
        // a task's ids are decoded from its spec; each one found is replaced by the key's own string,
        // so that a million waiting tasks keep one copy of each id, not one per task that needs it
        if (t.inputIds != null) {
            String[] ids = t.inputIds;
            for (int i = 0; i < ids.length; i++) {
                Key k = objects.get(ids[i]);
                if (k != null) {
                    ids[i] = k.id;
                }
                if (k != null && k.producer != t) {
                    int m = need(k, t, failed);
                    if (m < 0) {
                        return -1;
                    }
                    missing += m;
                }
            }
        }
        if (t.flow.after != null) {
            String[] after = t.flow.after;
            for (int i = 0; i < after.length; i++) {
                Key k = names.get(after[i]);
                if (k != null) { // restored from a journal that no longer knew it: done long ago
                    after[i] = k.id;
                    int m = need(k, t, failed);
                    if (m < 0) {
                        return -1;
                    }
                    missing += m;
                }
            }
        }
        return missing;
    }

    /**
     * Counts {@code t} among the readers of each temporary object it reads ({@code sign} 1 when it
     * is accepted, -1 when it finishes); a key whose last reader finished is handed to
     * {@code unneeded} (its holder may let it go).
     */
    void read(Task t, int sign, Consumer<Key> unneeded) {
        if (t.inputIds == null) {
            return;
        }
        for (String id : t.inputIds) {
            Key k = objects.get(id);
            if (k != null && k.temporary && k.origin != t) {
                k.readers += sign;
                if (sign > 0) {
                    t.flow.readsTemporary = true;
                } else if (k.readers == 0 && unneeded != null) {
                    unneeded.accept(k);
                }
            }
        }
    }

    /** The temporary objects {@code t} reads that are not available now: pending (being made again) or failed. */
    void temporaryInputs(Task t, Consumer<Key> each) {
        if (t.inputIds == null || !t.flow.readsTemporary) {
            return;
        }
        for (String id : t.inputIds) {
            Key k = objects.get(id);
            if (k != null && k.temporary && k.origin != t) {
                each.accept(k);
            }
        }
    }

    /** Every temporary object held on an executor, for {@code action} (to release them). */
    void forEachHeld(Consumer<Key> action) {
        objects.values().forEach(k -> {
            if (k.holder != null) {
                action.accept(k);
            }
        });
    }

    private static int need(Key k, Task t, Key[] failed) {
        switch (k.state) {
            case PENDING -> {
                k.subscribe(t);
                return 1;
            }
            case FAILED -> {
                failed[0] = k;
                return -1;
            }
            default -> {
                return 0;
            }
        }
    }

    /** The keys {@code t} produces, for its result: each is marked, and its subscribers handed to {@code each}. */
    void produced(Task t, boolean ok, long failedProducer, Consumer<Key> each) {
        DataflowNode f = t.flow;
        if (f.outputIds != null) {
            for (String id : f.outputIds) {
                finish(objects.get(id), t, ok, failedProducer, each);
            }
        }
        if (f.name != null) {
            finish(names.get(f.name), t, ok, failedProducer, each);
        }
    }

    private static void finish(Key k, Task t, boolean ok, long failedProducer, Consumer<Key> each) {
        if (k == null || k.producer != t) {
            return;
        }
        k.producer = null;
        k.state = ok ? State.PRODUCED : State.FAILED;
        k.failedProducer = failedProducer;
        each.accept(k);
    }

    // ---- the waiting tasks ---------------------------------------------------------------------

    /** {@code t} waits for {@code missing} keys, apart from the queue. */
    void addWaiting(Task t, int missing) {
        DataflowNode f = t.flow;
        f.waiting = true;
        f.missing = missing;
        f.waitPrev = null;
        f.waitNext = head;
        if (head != null) {
            head.flow.waitPrev = t;
        }
        head = t;
        waitingTasks++;
    }

    /** One key {@code t} waits for was produced; returns whether it misses nothing more. */
    boolean met(Task t) {
        return --t.flow.missing == 0;
    }

    void removeWaiting(Task t) {
        DataflowNode f = t.flow;
        if (!f.waiting) {
            throw new IllegalStateException("task " + t.id + " is not waiting");
        }
        if (f.waitPrev == null) {
            head = f.waitNext;
        } else {
            f.waitPrev.flow.waitNext = f.waitNext;
        }
        if (f.waitNext != null) {
            f.waitNext.flow.waitPrev = f.waitPrev;
        }
        f.waitPrev = null;
        f.waitNext = null;
        f.waiting = false;
        waitingTasks--;
    }

    int waitingTasks() {
        return waitingTasks;
    }

    /** The waiting tasks, for snapshots and checks (not to be changed while iterating). */
    void forEachWaiting(Consumer<Task> action) {
        for (Task t = head; t != null; t = t.flow.waitNext) {
            action.accept(t);
        }
    }

    /** A waiting task (the list's head), or null. */
    Task firstWaiting() {
        return head;
    }

    /** Every key that has finished, as the journal keeps them: produced, or failed with the task that failed. */
    void forEachFinished(FinishedKey action) {
        objects.forEach((id, k) -> {
            if (k.state != State.PENDING) {
                action.accept(id, false, k.state, k.failedProducer);
            }
        });
        names.forEach((n, k) -> {
            if (k.state != State.PENDING) {
                action.accept(n, true, k.state, k.failedProducer);
            }
        });
    }

    interface FinishedKey {
        void accept(String key, boolean isName, State state, long failedProducer);
    }
}
