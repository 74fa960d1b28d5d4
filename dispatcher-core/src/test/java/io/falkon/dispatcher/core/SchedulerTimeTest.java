package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.time.Clock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.falkon.dispatcher.core.SchedulerHarness.dispatched;
import static org.assertj.core.api.Assertions.assertThat;
import io.falkon.protocol.TaskSpecCodec;
import java.util.Map;

/** Intervals run on the monotonic tick; finished tasks leave the deadline index; a failing event stops the loop. */
class SchedulerTimeTest {

    /** Wall clock and monotonic tick that a test moves separately. */
    static final class SplitClock implements Clock {
        long wall = 1_700_000_000_000_000L;
        long tick = 5_000_000L;

        @Override
        public long nowMicros() {
            return wall;
        }

        @Override
        public long tickMicros() {
            return tick;
        }
    }

    private static Scheduler scheduler(SplitClock clock) {
        return new Scheduler(new FirstAvailable(), clock, "d", SchedulerConfig.defaults(), Journal.NONE);
    }

    @Test
    void aWallClockStepExpiresNoDeadlineLeaseOrSuspension() {
        SplitClock clock = new SplitClock();
        Scheduler s = scheduler(clock);
        FakeLink exec = new FakeLink("e");
        s.handle(Event.executor(exec, new Message.Register("e", "h", 1, 0, Map.of())));
        s.handle(Event.executor(exec, new Message.Credit(1)));
        FakeLink client = new FakeLink("c");
        s.handle(Event.client(client, new Message.CreateInstance(1, "c", 30)));
        s.endBatch();
        long id = client.sent(Message.InstanceCreated.class).get(0).instanceId();
        byte[] spec = TaskSpecCodec.encode(TaskSpec.builder("sleep", "1")
                .wallTime(Duration.ofSeconds(1)).build());
        s.handle(Event.submit(client, new Message.Submit(2, id, List.of(new Message.SubmittedTask(0, spec))), new TaskSpecCodec.Scan[]{TaskSpecCodec.scan(spec)}));
        s.endBatch();
        assertThat(dispatched(exec)).hasSize(1);
        s.handle(Event.gone(client, false)); // the lease of 30 s starts

        clock.wall += TimeUnit.HOURS.toMicros(2); // NTP steps the wall clock by two hours
        s.onTimer();
        s.endBatch();
        assertThat(exec.sent(Message.Cancel.class)).as("no dispatch timeout fired").isEmpty();
        assertThat(s.instanceCount()).as("the lease did not run out").isEqualTo(1);

        clock.tick += TimeUnit.SECONDS.toMicros(61) + 1; // real time passes: wall time + 60 s grace
        s.onTimer();
        s.endBatch();
        assertThat(exec.sent(Message.Cancel.class)).hasSize(1);
        assertThat(s.instanceCount()).as("30 s of real time since the client left").isZero();
    }

    @Test
    void aTaskLeavesTheDeadlineIndexWhenItLeavesItsExecutor() {
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable());
        FakeLink exec = h.executor("e", 100, 100);
        FakeLink client = h.client("c");
        h.submit(client, 100, TaskSpec.builder("true").wallTime(Duration.ofHours(1)).build());
        List<Message.DispatchedTask> running = dispatched(exec);
        assertThat(h.scheduler.pendingDeadlines()).isEqualTo(100);
        h.complete(exec, running.subList(0, 60));
        assertThat(h.scheduler.pendingDeadlines()).as("finished tasks hold no deadline").isEqualTo(40);
        h.scheduler.handle(Event.gone(exec, true)); // the rest are re-queued: no deadline while queued
        h.scheduler.endBatch();
        assertThat(h.scheduler.pendingDeadlines()).isZero();
    }

    @Test
    void anEventThatThrowsStopsTheLoopInsteadOfCarryingOn() throws Exception {
        Scheduler s = new Scheduler(new FirstAvailable(), Clock.SYSTEM, "d");
        SchedulerLoop loop = new SchedulerLoop(s).start();
        try {
            CompletableFuture<Void> before = new CompletableFuture<>();
            loop.execute(() -> before.complete(null));
            before.get(5, TimeUnit.SECONDS);
            loop.execute(() -> {
                throw new IllegalStateException("half-updated");
            });
            Throwable cause = loop.failed().get(5, TimeUnit.SECONDS);
            assertThat(cause).hasMessage("half-updated");
            CompletableFuture<Void> after = new CompletableFuture<>();
            loop.execute(() -> after.complete(null));
            assertThat(after).as("nothing runs on a scheduler whose state is not trusted").isNotDone();
        } finally {
            loop.close();
        }
    }
}
