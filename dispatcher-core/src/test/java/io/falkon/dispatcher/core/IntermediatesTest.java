package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.dispatcher.policy.MaxComputeUtil;
import io.falkon.protocol.DataCodec;
import io.falkon.protocol.Execution;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.ExtTags;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskInput;
import io.falkon.protocol.TaskOutput;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskStatus;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static io.falkon.dispatcher.core.SchedulerHarness.delivered;
import static io.falkon.dispatcher.core.SchedulerHarness.nameOf;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Temporary (intermediate) objects in the core: held by the producer's executor while readers
 * remain, released after the last one, made again when their holder is lost, and never a hang when
 * they cannot be. The harness checks the scheduler's invariants after every event.
 */
class IntermediatesTest {
    private final SchedulerHarness h = new SchedulerHarness(new MaxComputeUtil());

    private static TaskSpec producer(String name, String temp) {
        return TaskSpec.builder("/bin/true").name(name)
                .outputs(List.of(new TaskOutput(temp, temp, true), new TaskOutput("log", name + ".log"))).build();
    }

    private static TaskSpec reader(String name, String... in) {
        return TaskSpec.builder("/bin/true").name(name)
                .inputs(java.util.Arrays.stream(in).map(id -> new TaskInput(id, id, -1, "", 0, "")).toList()).build();
    }

    private static Execution held(String... ids) {
        return new Execution(TaskStatus.EXITED, 0, 0, 1, 2, new byte[0], new byte[0], "",
                List.of(new ExtField(ExtTags.HELD, DataCodec.encodeHeld(List.of(ids)))));
    }

    private static Execution fetchFailed(String why) {
        return Execution.of(TaskStatus.FETCH_FAILED, Execution.PERMANENT, why, 3);
    }

    /** What an executor was sent since the last call, split into dispatched tasks and released ids. */
    private static final class Sent {
        final List<Message.DispatchedTask> tasks = new ArrayList<>();
        final List<String> released = new ArrayList<>();

        Sent(FakeLink e) {
            for (Message m : e.drain()) {
                if (m instanceof Message.Dispatch d) {
                    tasks.addAll(d.tasks());
                } else if (m instanceof Message.Release r) {
                    released.addAll(r.ids());
                }
            }
        }

        Message.DispatchedTask named(String name) {
            return tasks.stream().filter(t -> nameOf(t) != null && nameOf(t).equals(name)).findFirst().orElseThrow();
        }
    }

    @Test
    void aTemporaryObjectIsHeldUntilItsLastReaderFinishesThenReleased() {
        FakeLink e = h.executor("e", 4, 4);
        FakeLink c = h.client("c");
        h.submitAll(c, List.of(producer("p", "t.fits"), reader("r1", "t.fits"), reader("r2", "t.fits")));
        Sent first = new Sent(e);
        assertThat(first.tasks).extracting(SchedulerHarness::nameOf).containsExactly("p");
        h.finish(e, first.tasks, held("t.fits"));
        Sent readers = new Sent(e);
        assertThat(readers.tasks).extracting(SchedulerHarness::nameOf).containsExactlyInAnyOrder("r1", "r2");
        assertThat(readers.released).isEmpty();

        h.complete(e, List.of(readers.named("r1")));
        assertThat(new Sent(e).released).as("r2 still reads it").isEmpty();
        h.complete(e, List.of(readers.named("r2")));
        assertThat(new Sent(e).released).as("the last reader finished").containsExactly("t.fits");
        assertThat(delivered(c)).hasSize(3).allSatisfy(r -> assertThat(r.execution().succeeded()).isTrue());
    }

    @Test
    void aLostHolderRunsTheProducerAgainAndItsReadersWaitForTheNewCopy() {
        FakeLink e1 = h.executor("e1", 1, 1);
        FakeLink c = h.client("c");
        List<Long> ids = h.submitAll(c, List.of(producer("p", "t.fits"), reader("r1", "t.fits"),
                reader("r2", "t.fits")));
        Sent p = new Sent(e1);
        h.finish(e1, p.tasks, held("t.fits"));
        FakeLink e2 = h.executor("e2", 1, 1);
        Sent onE1 = new Sent(e1);
        Sent onE2 = new Sent(e2);
        assertThat(onE1.tasks).extracting(SchedulerHarness::nameOf).containsExactly("r1");
        assertThat(onE2.tasks).extracting(SchedulerHarness::nameOf).containsExactly("r2");

        // the holder dies while r1 runs on it; r2, on e2, then fails to fetch the object
        h.scheduler.handle(Event.gone(e1, true));
        h.scheduler.endBatch();
        h.finish(e2, onE2.tasks, fetchFailed("cannot fetch t.fits (peer e1: connection refused; store: no such file)"));
        Sent rerun = new Sent(e2);
        assertThat(rerun.tasks).as("the producer runs again; its readers wait for it")
                .extracting(SchedulerHarness::nameOf).containsExactly("p");
        assertThat(h.scheduler.snapshot().waiting()).isEqualTo(2);
        assertThat(h.scheduler.snapshot().running()).isEqualTo(1);

        h.finish(e2, rerun.tasks, held("t.fits"));
        Sent again = new Sent(e2);
        assertThat(again.tasks).extracting(SchedulerHarness::nameOf).containsExactly("r1");
        assertThat(again.tasks.get(0).attempt()).as("a new attempt").isPositive();
        h.complete(e2, again.tasks);
        Sent last = new Sent(e2);
        assertThat(last.tasks).extracting(SchedulerHarness::nameOf).containsExactly("r2");
        h.complete(e2, last.tasks);
        assertThat(new Sent(e2).released).containsExactly("t.fits");

        // the client sees each of its tasks once, all succeeded; the rerun is the dispatcher's own
        assertThat(delivered(c)).extracting(Message.DeliveredResult::clientTaskId)
                .containsExactlyInAnyOrderElementsOf(ids);
        assertThat(delivered(c)).allSatisfy(r -> assertThat(r.execution().succeeded()).isTrue());
        assertThat(h.scheduler.snapshot().waiting()).isZero();
    }

    @Test
    void aProducerThatFailsWhenRunAgainFailsItsReadersNamingTheLostObject() {
        FakeLink e1 = h.executor("e1", 1, 1);
        FakeLink c = h.client("c");
        List<Long> ids = h.submitAll(c, List.of(producer("p", "t.fits"), reader("r", "t.fits")));
        h.finish(e1, new Sent(e1).tasks, held("t.fits"));
        FakeLink e2 = h.executor("e2", 1, 1);
        Sent r = new Sent(e1);
        assertThat(r.tasks).extracting(SchedulerHarness::nameOf).containsExactly("r");
        h.scheduler.handle(Event.gone(e1, true));
        h.scheduler.endBatch();
        Sent rerun = new Sent(e2);
        assertThat(rerun.tasks).extracting(SchedulerHarness::nameOf).containsExactly("p");
        h.finish(e2, rerun.tasks, SchedulerHarness.exited(1));

        assertThat(delivered(c)).hasSize(2);
        Message.DeliveredResult failed = delivered(c).stream().filter(x -> x.clientTaskId() == ids.get(1))
                .findFirst().orElseThrow();
        assertThat(failed.execution().status()).isEqualTo(TaskStatus.DEPENDENCY_FAILED);
        assertThat(failed.execution().detail()).contains("temporary input 't.fits'").contains("lost");
        assertThat(DataCodec.dependencyOf(failed.execution()).producer()).isEqualTo(ids.get(0));
        assertThat(h.scheduler.snapshot().waiting()).isZero();
        assertThat(h.scheduler.snapshot().queued()).isZero();
    }

    @Test
    void anObjectLostMoreOftenThanItCanBeMadeAgainEndsItsReaderInsteadOfLooping() {
        FakeLink c = h.client("c");
        FakeLink holder = h.executor("h0", 1, 1);
        List<Long> ids = h.submitAll(c, List.of(producer("p", "t.fits"), reader("r", "t.fits")));
        h.finish(holder, new Sent(holder).tasks, held("t.fits"));
        Sent r = new Sent(holder);
        assertThat(r.tasks).extracting(SchedulerHarness::nameOf).containsExactly("r");
        for (int i = 1; i <= Intermediates.MAX_RERUNS; i++) {
            h.scheduler.handle(Event.gone(holder, true)); // r waits again (a new attempt); p runs again
            h.scheduler.endBatch();
            holder = h.executor("h" + i, 1, 1);
            Sent rerun = new Sent(holder);
            assertThat(rerun.tasks).as("rerun " + i).extracting(SchedulerHarness::nameOf).containsExactly("p");
            h.finish(holder, rerun.tasks, held("t.fits"));
            r = new Sent(holder);
            assertThat(r.tasks).extracting(SchedulerHarness::nameOf).containsExactly("r");
        }
        h.scheduler.handle(Event.gone(holder, true));
        h.scheduler.endBatch();
        Message.DeliveredResult x = delivered(c).stream().filter(d -> d.clientTaskId() == ids.get(1)).findFirst()
                .orElseThrow();
        assertThat(x.execution().status()).as("each wait used one of its retries").isEqualTo(TaskStatus.EXECUTOR_LOST);
        assertThat(h.scheduler.snapshot().waiting() + h.scheduler.snapshot().queued()
                + h.scheduler.snapshot().running()).isZero();
    }

    @Test
    void underFirstAvailableAProducerOfTemporaryObjectsIsToldToBypassTheCache() {
        SchedulerHarness fa = new SchedulerHarness(new FirstAvailable());
        FakeLink e = fa.executor("e", 1, 1);
        FakeLink c = fa.client("c");
        fa.submitAll(c, List.of(producer("p", "t.fits")));
        Message.DispatchedTask p = SchedulerHarness.dispatched(e).get(0);
        assertThat(p.ext()).as("no data diffusion: the executor writes its temporary outputs through")
                .anySatisfy(f -> assertThat(f.tag()).isEqualTo(ExtTags.BYPASS_CACHE));
    }

    @Test
    void heldObjectsAreReleasedWhenTheirInstanceIsDestroyed() {
        FakeLink e = h.executor("e", 1, 1);
        FakeLink c = h.client("c");
        h.submitAll(c, List.of(producer("p", "t.fits")));
        h.finish(e, new Sent(e).tasks, held("t.fits"));
        assertThat(new Sent(e).released).as("a reader may still come").isEmpty();
        h.scheduler.handle(Event.client(c, new Message.Destroy(5, h.instanceOf(c))));
        h.scheduler.endBatch();
        assertThat(new Sent(e).released).containsExactly("t.fits");
    }
}
