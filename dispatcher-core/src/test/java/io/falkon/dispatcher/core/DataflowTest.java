package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.protocol.DataCodec;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskInput;
import io.falkon.protocol.TaskOutput;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskStatus;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import static io.falkon.dispatcher.core.SchedulerHarness.delivered;
import static io.falkon.dispatcher.core.SchedulerHarness.dispatched;
import static io.falkon.dispatcher.core.SchedulerHarness.exited;
import static io.falkon.dispatcher.core.SchedulerHarness.nameOf;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Dependencies inside the dispatcher (AME's dataflow): a task waits, apart from the queue, for what
 * other tasks of its instance produce; a producer's success releases it, a failure fails it (and what
 * waits for it) without running. The harness checks the scheduler's invariants after every event.
 */
class DataflowTest {
    private final SchedulerHarness h = new SchedulerHarness(new FirstAvailable());

    /** A task named {@code name} that writes object {@code out} (if not null) and reads {@code in}. */
    private static TaskSpec task(String name, String out, String... in) {
        TaskSpec.Builder b = TaskSpec.builder("/bin/true").name(name);
        if (out != null) {
            b.outputs(List.of(new TaskOutput(out, out)));
        }
        if (in.length > 0) {
            b.inputs(java.util.Arrays.stream(in).map(id -> new TaskInput(id, id, -1, "", 0, "")).toList());
        }
        return b.build();
    }

    private static Map<String, Message.DeliveredResult> byTask(FakeLink client, List<Long> ids, List<String> names) {
        Map<Long, String> nameOfId = new java.util.HashMap<>();
        for (int i = 0; i < ids.size(); i++) {
            nameOfId.put(ids.get(i), names.get(i));
        }
        return delivered(client).stream().collect(Collectors.toMap(r -> nameOfId.get(r.clientTaskId()),
                Function.identity()));
    }

    @Test
    void aConsumerWaitsApartFromTheQueueUntilItsProducerSucceeds() {
        FakeLink e = h.executor("e", 4, 4);
        FakeLink c = h.client("c");
        h.submitAll(c, List.of(task("project", "p.fits", "raw.fits"), task("diff", "d.fits", "p.fits"),
                task("add", "mosaic.fits", "d.fits", "p.fits")));
        List<Message.DispatchedTask> first = dispatched(e);
        assertThat(first).extracting(SchedulerHarness::nameOf).containsExactly("project");
        StatusSnapshot s = h.scheduler.snapshot();
        assertThat(s.waiting()).isEqualTo(2);
        assertThat(s.queued()).as("waiting tasks are not queued").isZero();
        assertThat(s.instanceList().get(0).waiting()).isEqualTo(2);

        h.complete(e, first);
        List<Message.DispatchedTask> second = dispatched(e);
        assertThat(second).extracting(SchedulerHarness::nameOf).containsExactly("diff");
        assertThat(h.scheduler.snapshot().waiting()).isEqualTo(1);
        h.complete(e, second);
        List<Message.DispatchedTask> third = dispatched(e);
        assertThat(third).extracting(SchedulerHarness::nameOf).containsExactly("add");
        h.complete(e, third);
        assertThat(delivered(c)).hasSize(3).allSatisfy(r -> assertThat(r.execution().succeeded()).isTrue());
        assertThat(h.scheduler.snapshot().waiting()).isZero();
    }

    @Test
    void afterOrdersTasksWithoutFilesAndAnAlreadySucceededProducerIsNoWait() {
        FakeLink e = h.executor("e", 4, 4);
        FakeLink c = h.client("c");
        h.submitAll(c, List.of(TaskSpec.builder("/bin/true").name("setup").build()));
        h.complete(e, dispatched(e));
        // submitted after setup succeeded: runs at once; teardown waits for both
        h.submitAll(c, List.of(TaskSpec.builder("/bin/true").name("work").after("setup").build(),
                TaskSpec.builder("/bin/true").name("teardown").after("setup", "work").build()));
        List<Message.DispatchedTask> work = dispatched(e);
        assertThat(work).extracting(SchedulerHarness::nameOf).containsExactly("work");
        h.complete(e, work);
        assertThat(dispatched(e)).extracting(SchedulerHarness::nameOf).containsExactly("teardown");
    }

    @Test
    void aFailedProducerFailsItsDependantsTransitivelyWithoutRunningThemNamingIt() {
        FakeLink e = h.executor("e", 4, 4);
        FakeLink c = h.client("c");
        List<String> names = List.of("a", "b", "c", "d", "independent");
        List<Long> ids = h.submitAll(c, List.of(task("a", "a.out"), task("b", "b.out", "a.out"),
                TaskSpec.builder("/bin/true").name("c").after("b").build(), task("d", null, "b.out", "x.in"),
                task("independent", null, "x.in")));
        List<Message.DispatchedTask> running = dispatched(e);
        assertThat(running).extracting(SchedulerHarness::nameOf).containsExactlyInAnyOrder("a", "independent");
        Message.DispatchedTask a = running.stream().filter(t -> nameOf(t).equals("a")).findFirst().orElseThrow();
        h.finish(e, List.of(a), exited(3));
        assertThat(dispatched(e)).as("nothing downstream of a runs").isEmpty();
        h.complete(e, running.stream().filter(t -> !nameOf(t).equals("a")).toList());
        Map<String, Message.DeliveredResult> r = byTask(c, ids, names);
        assertThat(r.get("a").execution().exitCode()).isEqualTo(3);
        assertThat(r.get("independent").execution().succeeded()).isTrue();
        for (String downstream : List.of("b", "c", "d")) {
            Message.DeliveredResult x = r.get(downstream);
            assertThat(x.execution().status()).as(downstream).isEqualTo(TaskStatus.DEPENDENCY_FAILED);
            assertThat(x.executorId()).as("never ran").isEmpty();
            DataCodec.Dependency dep = DataCodec.dependencyOf(x.execution());
            assertThat(dep.producer()).as("names the task that failed first upstream").isEqualTo(ids.get(0));
            assertThat(x.execution().detail()).contains("task " + ids.get(0) + " did not succeed");
        }
        assertThat(DataCodec.dependencyOf(r.get("b").execution()).what()).isEqualTo("a.out");
        assertThat(DataCodec.dependencyOf(r.get("c").execution()).what()).isEqualTo("after:b");
        assertThat(h.scheduler.snapshot().waiting()).isZero();
        // a task submitted later that needs a failed key fails at once
        List<Long> late = h.submitAll(c, List.of(task("late", null, "a.out")));
        assertThat(delivered(c)).filteredOn(x -> x.clientTaskId() == late.get(0)).singleElement()
                .satisfies(x -> assertThat(x.execution().status()).isEqualTo(TaskStatus.DEPENDENCY_FAILED));
    }

    @Test
    void destroyingOrHaltingAnInstanceCancelsItsWaitingTasks() {
        FakeLink e = h.executor("e", 1, 1);
        FakeLink c = h.client("c");
        h.submitAll(c, List.of(task("p", "p.out"), task("q", null, "p.out"), task("r", null, "p.out")));
        assertThat(dispatched(e)).hasSize(1);
        h.scheduler.handle(Event.client(c, new Message.Halt(99, h.instanceOf(c))));
        h.scheduler.endBatch();
        assertThat(c.sent(Message.Halted.class)).singleElement().satisfies(x -> assertThat(x.cancelled()).isEqualTo(2));
        assertThat(delivered(c)).hasSize(2).allSatisfy(r -> assertThat(r.execution().status())
                .isEqualTo(TaskStatus.CANCELLED));
        assertThat(h.scheduler.snapshot().waiting()).isZero();

        FakeLink d = h.client("d");
        h.submitAll(d, List.of(task("p", "p.out"), task("q", null, "p.out")));
        h.scheduler.handle(Event.client(d, new Message.Destroy(100, h.instanceOf(d))));
        h.scheduler.endBatch();
        assertThat(d.sent(Message.Destroyed.class)).singleElement().satisfies(x -> assertThat(x.cancelled()).isEqualTo(2));
    }

    @Test
    void cancellingSomeTasksEndsThemWhereverTheyAreAndWhatNeedsThemAndNothingElse() {
        FakeLink e = h.executor("e", 1, 1);
        FakeLink c = h.client("c");
        // p runs; q waits for p; r waits for q; s and t are queued behind p (one slot)
        List<Long> ids = h.submitAll(c, List.of(task("p", "p.out"), task("q", "q.out", "p.out"),
                task("r", null, "q.out"), task("s", null), task("t", null)));
        List<Message.DispatchedTask> running = dispatched(e);
        assertThat(running).extracting(SchedulerHarness::nameOf).containsExactly("p");
        long unknown = 1_000;
        h.scheduler.handle(Event.client(c, new Message.CancelTasks(7, h.instanceOf(c),
                new long[]{ids.get(0), ids.get(1), ids.get(3), unknown})));
        h.scheduler.endBatch();
        assertThat(c.sent(Message.TasksCancelled.class)).singleElement()
                .satisfies(x -> assertThat(x.cancelled()).as("p running, q waiting, s queued").isEqualTo(3));
        assertThat(e.sent(Message.Cancel.class)).singleElement()
                .satisfies(x -> assertThat(x.taskIds()).containsExactly(running.get(0).taskId()));
        Map<String, Message.DeliveredResult> out = byTask(c, ids, List.of("p", "q", "r", "s", "t"));
        assertThat(out).containsOnlyKeys("p", "q", "r", "s");
        assertThat(out.values()).allSatisfy(r -> assertThat(r.execution().status()).isEqualTo(TaskStatus.CANCELLED));
        assertThat(out.get("r").execution().detail()).isEqualTo("not run: a task it needs was cancelled");
        assertThat(out.get("p").execution().detail()).isEqualTo("cancelled by its client");
        // the instance goes on: t runs on the slot p held, and a second cancel of p finds nothing
        h.scheduler.handle(Event.executor(e, new Message.Result(1, List.of())));
        h.scheduler.endBatch();
        assertThat(dispatched(e)).extracting(SchedulerHarness::nameOf).containsExactly("t");
        h.scheduler.handle(Event.client(c, new Message.CancelTasks(8, h.instanceOf(c), new long[]{ids.get(0)})));
        h.scheduler.endBatch();
        assertThat(c.sent(Message.TasksCancelled.class)).last().satisfies(x -> assertThat(x.cancelled()).isZero());
    }

    @Test
    void aBundleThatWouldBreakTheDataflowIsRefusedWholeNamingTheTask() {
        h.executor("e", 1, 0);
        FakeLink c = h.client("c");
        h.submitAll(c, List.of(task("p", "p.out")));
        h.submitAll(c, List.of(task("ok", null, "p.out"), task("p2", "p.out")));
        h.submitAll(c, List.of(TaskSpec.builder("/bin/true").name("z").after("nobody").build()));
        h.submitAll(c, List.of(TaskSpec.builder("/bin/true").name("twin").build(),
                TaskSpec.builder("/bin/true").name("twin").build()));
        List<Message.ErrorMessage> refused = c.sent(Message.ErrorMessage.class);
        assertThat(refused).extracting(Message.ErrorMessage::errorCode).containsOnly(ErrorCode.INVALID_TASK);
        assertThat(refused).extracting(Message.ErrorMessage::message).satisfiesExactly(
                m -> assertThat(m).startsWith("task 1 of the bundle").contains("object 'p.out' already has a producer"),
                m -> assertThat(m).contains("after: no task named 'nobody'"),
                m -> assertThat(m).startsWith("task 1 of the bundle").contains("the name 'twin' is already taken"));
        assertThat(h.scheduler.snapshot().waiting()).as("nothing of a refused bundle waits").isZero();
    }

    @Test
    void aReleasedConsumerGoesWhereItsProducerLeftItsOutputs() {
        SchedulerHarness mcu = new SchedulerHarness(new io.falkon.dispatcher.policy.MaxComputeUtil());
        FakeLink e1 = mcu.executor("e1", 1, 1);
        FakeLink c = mcu.client("c");
        mcu.submitAll(c, List.of(task("stage1", "s1.out", "raw"), task("stage2", "s2.out", "s1.out")));
        List<Message.DispatchedTask> first = dispatched(e1);
        assertThat(first).extracting(SchedulerHarness::nameOf).containsExactly("stage1");
        FakeLink e2 = mcu.executor("e2", 4, 4); // free and bigger, but it holds nothing of stage 1
        mcu.complete(e1, first);
        List<Message.DispatchedTask> second = dispatched(e1);
        assertThat(second).as("stage 2 runs where stage 1's output is cached").extracting(SchedulerHarness::nameOf)
                .containsExactly("stage2");
        assertThat(dispatched(e2)).isEmpty();
    }

    @Test
    void anInputNoTaskProducesIsReadFromTheStoreAsBefore() {
        FakeLink e = h.executor("e", 2, 2);
        FakeLink c = h.client("c");
        h.submitAll(c, List.of(task("p", "p.out"), task("s", null, "in-the-store.dat")));
        assertThat(dispatched(e)).hasSize(2);
    }
}
