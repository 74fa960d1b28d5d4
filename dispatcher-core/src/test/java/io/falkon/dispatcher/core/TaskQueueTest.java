package io.falkon.dispatcher.core;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The queue against a plain model: a list ordered by priority (higher first), where a task added
 * at the tail goes after every task of its priority and one added at the head before them.
 */
class TaskQueueTest {
    private long ids;

    private Task task(int priority) {
        return new Task(ids++, null, 0, new byte[0], 0, 0, 0, null, null, priority);
    }

    private static List<Long> order(TaskQueue q) {
        List<Long> out = new ArrayList<>();
        for (Task t = q.head(); t != null; t = t.next) {
            out.add(t.id);
        }
        return out;
    }

    /** The model's order: stable by priority, where head-added tasks carry an earlier position. */
    private record Entry(Task task, double position) {
    }

    @Test
    void randomOperationsKeepThePriorityOrderAndFifoWithinAPriority() {
        Random rnd = new Random(42);
        for (int round = 0; round < 50; round++) {
            TaskQueue q = new TaskQueue();
            List<Entry> model = new ArrayList<>();
            double front = 0;
            double back = 0;
            for (int op = 0; op < 400; op++) {
                int kind = rnd.nextInt(10);
                if (kind < 5) {
                    Task t = task(rnd.nextInt(5) - 2);
                    boolean atTail = q.addLast(t);
                    model.add(new Entry(t, ++back));
                    assertThat(atTail).isEqualTo(t.next == null);
                } else if (kind < 7) {
                    Task t = task(rnd.nextInt(5) - 2);
                    q.addFirst(t);
                    model.add(new Entry(t, --front));
                } else if (!model.isEmpty()) {
                    Entry gone = model.remove(rnd.nextInt(model.size()));
                    q.remove(gone.task());
                    assertThat(gone.task().queued).isFalse();
                }
                List<Entry> sorted = new ArrayList<>(model);
                sorted.sort(Comparator.comparingInt((Entry e) -> -e.task().priority).thenComparingDouble(Entry::position));
                assertThat(order(q)).isEqualTo(sorted.stream().map(e -> e.task().id).toList());
                assertThat(q.size()).isEqualTo(model.size());
                for (int p = -2; p <= 2; p++) {
                    int priority = p;
                    assertThat(q.countAt(p)).isEqualTo((int) model.stream().filter(e -> e.task().priority == priority)
                            .count());
                }
            }
        }
    }

    @Test
    void withEveryTaskAtTheDefaultPriorityItIsAFifoAndNeedsNoLevels() {
        TaskQueue q = new TaskQueue();
        for (int i = 0; i < 5; i++) {
            assertThat(q.addLast(task(0))).isTrue();
        }
        Task retry = task(0);
        q.addFirst(retry);
        assertThat(order(q)).containsExactly(5L, 0L, 1L, 2L, 3L, 4L);
        assertThat(q.levels()).isEqualTo(1);
        q.removeIf(t -> true, t -> { });
        assertThat(q.isEmpty()).isTrue();
        assertThat(q.levels()).isZero();
    }
}
