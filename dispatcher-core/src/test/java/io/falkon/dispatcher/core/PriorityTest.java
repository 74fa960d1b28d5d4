package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.dispatcher.policy.GoodCacheCompute;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskStatus;
import io.falkon.protocol.Execution;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static io.falkon.dispatcher.core.SchedulerHarness.dispatched;
import static io.falkon.dispatcher.core.SchedulerHarness.nameOf;
import static org.assertj.core.api.Assertions.assertThat;

/** A queued task of a higher priority starts before every queued task of a lower one. */
class PriorityTest {
    private static TaskSpec named(String name, int priority) {
        return TaskSpec.builder("/bin/true").name(name).priority(priority).build();
    }

    /**
     * Runs the one-slot executor to the end, one task at a time, starting by completing
     * {@code running}; adds the names of the tasks in the order they started to {@code started}.
     */
    private static List<String> drain(SchedulerHarness h, FakeLink exec, List<Message.DispatchedTask> running,
                                      List<String> started) {
        List<Message.DispatchedTask> current = running;
        while (!current.isEmpty()) {
            h.complete(exec, current);
            current = dispatched(exec);
            current.forEach(t -> started.add(nameOf(t)));
        }
        return started;
    }

    @Test
    void urgentWorkOvertakesTheBacklogAndLowPriorityWaitsForTheRest() {
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable());
        FakeLink exec = h.executor("e", 1, 1);
        FakeLink client = h.client("c");
        List<TaskSpec> backlog = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            backlog.add(named("b" + i, 0));
        }
        backlog.add(named("late", -1));
        h.submitAll(client, backlog);
        List<Message.DispatchedTask> running = dispatched(exec); // b0 took the slot at once
        List<String> started = new ArrayList<>(running.stream().map(SchedulerHarness::nameOf).toList());
        h.submitAll(client, List.of(named("u0", 10), named("u1", 10), named("m", 5)));
        assertThat(drain(h, exec, running, started)).containsExactly("b0", "u0", "u1", "m", "b1", "b2", "b3", "late");
    }

    @Test
    void aRetriedTaskGoesAheadOfItsOwnPriorityOnly() {
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable());
        FakeLink exec = h.executor("e", 1, 1);
        FakeLink client = h.client("c");
        h.submitAll(client, List.of(named("u0", 10), named("u1", 10), named("u2", 10), named("b0", 0)));
        List<Message.DispatchedTask> first = dispatched(exec);
        assertThat(first).extracting(SchedulerHarness::nameOf).containsExactly("u0");
        // u0's executor fails it in a way that is retried: back at the head of priority 10
        h.finish(exec, first, Execution.of(TaskStatus.LAUNCH_FAILED, "no fork", 5));
        List<Message.DispatchedTask> again = dispatched(exec);
        List<String> started = new ArrayList<>(again.stream().map(SchedulerHarness::nameOf).toList());
        assertThat(drain(h, exec, again, started)).containsExactly("u0", "u1", "u2", "b0");
    }

    @Test
    void aDataAwarePolicyTakesAnUrgentTaskIntoItsWindowAtOnce() {
        // a window of 2: the backlog fills it, and the urgent task must not wait behind the rest of it
        SchedulerHarness h = new SchedulerHarness(new GoodCacheCompute(0.9),
                SchedulerConfig.defaults().withWindowSize(2), Journal.NONE);
        FakeLink exec = h.executor("e", 1, 1);
        FakeLink client = h.client("c");
        List<TaskSpec> backlog = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            backlog.add(named("b" + i, 0));
        }
        h.submitAll(client, backlog);
        List<Message.DispatchedTask> running = dispatched(exec);
        List<String> started = new ArrayList<>(running.stream().map(SchedulerHarness::nameOf).toList());
        h.submitAll(client, List.of(named("u", 10)));
        drain(h, exec, running, started);
        assertThat(started.indexOf("u")).as("started %s", started).isLessThanOrEqualTo(2);
        assertThat(started).hasSize(7);
    }
}
