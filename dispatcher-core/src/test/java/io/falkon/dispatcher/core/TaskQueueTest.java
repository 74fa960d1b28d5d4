package io.falkon.dispatcher.core;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The queue's order: between instances, turns by their shares (fair share); within an instance,
 * its own priorities, a retry ahead of its priority, otherwise the order it submitted.
 */
class TaskQueueTest {
    private long ids;
    private final Map<Task, String> names = new HashMap<>();

    private static Instance instance(long id) {
        return new Instance(id, "secret", "i" + id, null, 0, 0);
    }

    private Task task(Instance in, int priority, String name) {
        Task t = new Task(ids++, in, 0, new byte[0], 0, 0, 0, null, null, priority);
        names.put(t, name);
        return t;
    }

    private List<String> order(TaskQueue q) {
        List<String> out = new ArrayList<>();
        for (Task t = q.head(); t != null; t = t.next) {
            out.add(names.get(t));
        }
        return out;
    }

    @Test
    void instancesTakeTurnsAndALateOneStartsWhereDispatchingHasGot() {
        TaskQueue q = new TaskQueue();
        Instance a = instance(1);
        Instance b = instance(2);
        Instance c = instance(3);
        for (int i = 1; i <= 6; i++) {
            q.addLast(task(a, 0, "a" + i));
        }
        for (int i = 1; i <= 3; i++) {
            q.addLast(task(b, 0, "b" + i));
        }
        assertThat(order(q)).containsExactly("a1", "b1", "a2", "b2", "a3", "b3", "a4", "a5", "a6");
        q.dispatched(q.head());
        q.dispatched(q.head());
        q.dispatched(q.head()); // a1, b1, a2: the turns have got to 2
        for (int i = 1; i <= 2; i++) {
            q.addLast(task(c, 0, "c" + i)); // no credit for arriving late, none for being idle either
        }
        assertThat(order(q)).containsExactly("b2", "a3", "b3", "c1", "a4", "c2", "a5", "a6");
        q.addFirst(task(a, 0, "retry")); // has waited already: ahead of all
        assertThat(order(q)).containsExactly("retry", "b2", "a3", "b3", "c1", "a4", "c2", "a5", "a6");
    }

    @Test
    void aPriorityOrdersOnlyItsOwnInstancesTasksAndTakesNoTurnFromAnother() {
        TaskQueue q = new TaskQueue();
        Instance a = instance(1);
        Instance b = instance(2);
        for (int i = 1; i <= 3; i++) {
            q.addLast(task(b, 0, "b" + i));
        }
        for (int i = 1; i <= 3; i++) {
            q.addLast(task(a, Integer.MAX_VALUE, "u" + i)); // as urgent as can be: still only a's turns
        }
        assertThat(order(q)).containsExactly("b1", "u1", "b2", "u2", "b3", "u3");
        // b's own urgent task takes b's earliest turn; b's others move along b's turns, in their order
        q.addLast(task(b, 5, "bu"));
        assertThat(order(q)).containsExactly("bu", "u1", "b1", "u2", "b2", "u3", "b3");
        q.addLast(task(b, -1, "late"));
        q.addLast(task(b, 0, "b4"));
        assertThat(order(q)).containsExactly("bu", "u1", "b1", "u2", "b2", "u3", "b3", "b4", "late");
        // a retry of b's, at priority 0: ahead of b's tasks of its priority, behind its urgent one
        q.addFirst(task(b, 0, "retry"));
        assertThat(order(q)).containsExactly("bu", "retry", "u1", "b1", "u2", "b2", "u3", "b3", "b4", "late");
    }

    @Test
    void anInstanceWithTwiceTheShareGetsTwoTurnsForEachOfTheOthers() {
        TaskQueue q = new TaskQueue();
        Instance a = instance(1);
        Instance b = instance(2);
        a.share(2);
        for (int i = 1; i <= 6; i++) {
            q.addLast(task(a, 0, "a" + i));
            q.addLast(task(b, 0, "b" + i));
        }
        assertThat(order(q).subList(0, 9)).containsExactly("a1", "b1", "a2", "a3", "b2", "a4", "a5", "b3", "a6");
    }

    @Test
    void withOneInstanceAtTheDefaultPriorityItIsAFifoAppendedAtTheTail() {
        TaskQueue q = new TaskQueue();
        Instance a = instance(1);
        for (int i = 0; i < 5; i++) {
            assertThat(q.addLast(task(a, 0, "t" + i))).isTrue();
        }
        q.addFirst(task(a, 0, "retry"));
        assertThat(order(q)).containsExactly("retry", "t0", "t1", "t2", "t3", "t4");
        assertThat(q.levels()).isEqualTo(1);
        List<String> removed = new ArrayList<>();
        q.removeAll(a, t -> { }, t -> removed.add(names.get(t)));
        assertThat(removed).containsExactly("retry", "t0", "t1", "t2", "t3", "t4");
        assertThat(q.isEmpty()).isTrue();
        assertThat(q.levels()).isZero();
    }

    @Test
    void randomOperationsKeepEveryOrderingRuleAndTheCounts() {
        Random rnd = new Random(42);
        for (int round = 0; round < 60; round++) {
            TaskQueue q = new TaskQueue();
            Instance[] ins = {instance(1), instance(2), instance(3)};
            ins[2].share(0.5 + rnd.nextInt(3));
            List<Task> queued = new ArrayList<>();
            Map<Task, Long> order = new HashMap<>(); // per instance: retries before the rest, each by when queued
            long seq = 0;
            for (int op = 0; op < 400; op++) {
                int kind = rnd.nextInt(10);
                if (kind < 5) {
                    Task t = task(ins[rnd.nextInt(3)], rnd.nextInt(4) - 1, "t");
                    assertThat(q.addLast(t)).isEqualTo(t.next == null);
                    queued.add(t);
                    order.put(t, seq++);
                } else if (kind < 6) {
                    Task t = task(ins[rnd.nextInt(3)], rnd.nextInt(4) - 1, "r");
                    q.addFirst(t);
                    queued.add(t);
                    order.put(t, -(seq++)); // the latest retry first
                } else if (kind < 8 && !queued.isEmpty()) {
                    Task gone = q.head();
                    q.dispatched(gone);
                    queued.remove(gone);
                } else if (!queued.isEmpty()) {
                    Task gone = queued.remove(rnd.nextInt(queued.size()));
                    if (rnd.nextBoolean()) {
                        q.remove(gone);
                    } else {
                        q.dispatched(gone); // a data-aware policy takes one from the middle
                    }
                    assertThat(gone.queued).isFalse();
                }
                checkOrder(q, order);
                assertThat(q.size()).isEqualTo(queued.size());
                for (int p = -1; p <= 2; p++) {
                    int priority = p;
                    assertThat(q.countAt(p)).isEqualTo((int) queued.stream().filter(t -> t.priority == priority).count());
                }
            }
        }
    }

    private static void checkOrder(TaskQueue q, Map<Task, Long> order) {
        Map<Instance, Task> lastOfInstance = new HashMap<>();
        Task prev = null;
        for (Task t = q.head(); t != null; prev = t, t = t.next) {
            assertThat(t.prev).isSameAs(prev);
            if (prev != null) {
                assertThat(TaskQueue.ahead(prev, t)).as("turns in order").isTrue();
            }
            Task before = lastOfInstance.put(t.instance, t);
            assertThat(t.qPrev).as("its instance's own order is the queue's").isSameAs(before);
            if (before != null) {
                assertThat(before.priority).as("an instance's higher priorities first").isGreaterThanOrEqualTo(t.priority);
                if (before.priority == t.priority) {
                    assertThat(order.get(before)).as("retries first, then as submitted").isLessThan(order.get(t));
                }
            }
        }
    }
}
