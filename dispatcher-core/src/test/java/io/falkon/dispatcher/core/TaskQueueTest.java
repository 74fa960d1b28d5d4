package io.falkon.dispatcher.core;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The queue's order: priority first; within a priority the instances take turns (fair share) and
 * each instance's tasks keep their order; a retry goes ahead of its priority.
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
        q.dispatched(q.head()); // a1, b1, a2: this priority's turn has got to 2
        for (int i = 1; i <= 2; i++) {
            q.addLast(task(c, 0, "c" + i)); // no credit for arriving late, none for being idle either
        }
        assertThat(order(q)).containsExactly("b2", "a3", "b3", "c1", "a4", "c2", "a5", "a6");
        Task retry = task(a, 0, "retry");
        q.addFirst(retry);
        q.addLast(task(b, 1, "urgent"));
        assertThat(order(q)).containsExactly("urgent", "retry", "b2", "a3", "b3", "c1", "a4", "c2", "a5", "a6");
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
        q.removeIf(t -> true, t -> { }, t -> { });
        assertThat(q.isEmpty()).isTrue();
        assertThat(q.levels()).isZero();
    }

    @Test
    void anInstanceThatKeepsUsingNewPrioritiesRemembersABoundedNumberOfTurns() {
        TaskQueue q = new TaskQueue();
        Instance a = instance(1);
        for (int p = 1; p <= 1000; p++) {
            q.addLast(task(a, p, "p" + p));
            assertThat(a.otherFairKeys).hasSizeLessThanOrEqualTo(TaskQueue.MAX_PRIORITIES_REMEMBERED);
        }
        assertThat(q.size()).isEqualTo(1000);
        assertThat(names.get(q.head())).isEqualTo("p1000");
    }

    @Test
    void randomOperationsKeepEveryOrderingRuleAndTheCounts() {
        Random rnd = new Random(42);
        for (int round = 0; round < 40; round++) {
            TaskQueue q = new TaskQueue();
            Instance[] ins = {instance(1), instance(2), instance(3)};
            List<Task> queued = new ArrayList<>();
            Map<Task, Long> submitted = new HashMap<>(); // addLast order, per instance (retries excluded)
            long seq = 0;
            for (int op = 0; op < 400; op++) {
                int kind = rnd.nextInt(10);
                if (kind < 5) {
                    Task t = task(ins[rnd.nextInt(3)], rnd.nextInt(3) - 1, "t");
                    assertThat(q.addLast(t)).isEqualTo(t.next == null);
                    queued.add(t);
                    submitted.put(t, seq++);
                } else if (kind < 6) {
                    Task t = task(ins[rnd.nextInt(3)], rnd.nextInt(3) - 1, "r");
                    q.addFirst(t);
                    queued.add(t);
                } else if (kind < 8 && !queued.isEmpty()) {
                    Task gone = q.head();
                    q.dispatched(gone);
                    queued.remove(gone);
                } else if (!queued.isEmpty()) {
                    Task gone = queued.remove(rnd.nextInt(queued.size()));
                    q.remove(gone);
                    assertThat(gone.queued).isFalse();
                }
                checkOrder(q, submitted);
                assertThat(q.size()).isEqualTo(queued.size());
                for (int p = -1; p <= 1; p++) {
                    int priority = p;
                    assertThat(q.countAt(p)).isEqualTo((int) queued.stream().filter(t -> t.priority == priority).count());
                }
            }
        }
    }

    private static void checkOrder(TaskQueue q, Map<Task, Long> submitted) {
        Map<String, Long> lastOfInstance = new HashMap<>();
        Task prev = null;
        for (Task t = q.head(); t != null; prev = t, t = t.next) {
            assertThat(t.prev).isSameAs(prev);
            if (prev != null) {
                assertThat(prev.priority).isGreaterThanOrEqualTo(t.priority);
                if (prev.priority == t.priority) {
                    assertThat(prev.fairKey).isLessThanOrEqualTo(t.fairKey);
                }
            }
            Long s = submitted.get(t);
            if (s != null) { // an instance's own tasks keep the order it queued them in, at each priority
                String key = t.instance.id + "/" + t.priority;
                Long before = lastOfInstance.put(key, s);
                assertThat(before == null || before < s).as("%s queued in order", key).isTrue();
            }
        }
    }
}
