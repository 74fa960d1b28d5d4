package io.falkon.provisioner;

import io.falkon.protocol.time.FakeClock;
import io.falkon.protocol.auth.Token;
import io.falkon.provisioner.lrm.LocalAdapter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The provisioner measures idle times on the monotonic clock it is given, never on the wall clock:
 * an idle allocation is released when that clock has advanced by the idle time, at once, however
 * little real time passed, and not before, however many polls go by.
 *
 * <p>The dispatcher here is a scripted status document and the allocation's node is an in-memory
 * stand-in for an executor process (labelled fake: what is under test is the provisioner's time,
 * and a real executor could not stay "idle for ten seconds" in a few milliseconds).
 */
class ProvisionerClockTest {
    @Test
    void anIdleAllocationIsReleasedWhenTheMonotonicClockSaysSoAndNotBefore(@TempDir Path work) throws Exception {
        FakeClock clock = new FakeClock(1_000_000_000);
        AtomicInteger polls = new AtomicInteger();
        AtomicBoolean nodeAlive = new AtomicBoolean();
        AtomicReference<String> status =
                new AtomicReference<>("{\"queued\":4,\"running\":0,\"executors\":{\"slots\":0},\"executorList\":[]}");
        LocalAdapter.Launcher fakeNode = (request, jobId, index) -> {
            nodeAlive.set(true);
            return new LocalAdapter.Node() {
                @Override
                public boolean alive() {
                    return nodeAlive.get();
                }

                @Override
                public void stop() {
                    nodeAlive.set(false);
                }
            };
        };
        Provisioner.Config config = new Provisioner.Config(new Planner.Bounds(0, 1, 1, 2, 600, 1.0),
                AcquisitionPolicy.ALL_AT_ONCE, ReleasePolicy.centralized(Duration.ofSeconds(10), 1),
                List.of("falkon", "executor"), Duration.ofMillis(10), work, "clock", Token.random());
        try (LocalAdapter lrm = new LocalAdapter(Duration.ZERO, fakeNode);
             Provisioner p = Provisioner.start(config, lrm, () -> {
                 polls.incrementAndGet();
                 return status.get();
             }, clock)) {
            await().atMost(Duration.ofSeconds(10)).until(() -> nodeAlive.get() && p.allocations().size() == 1);
            // its executor registers and the queue runs dry
            status.set("{\"queued\":0,\"running\":0,\"executors\":{\"slots\":2},"
                    + "\"executorList\":[{\"id\":\"clock-a1-node0-1\",\"running\":0}]}");
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> p.allocations().get(0).stage() == Allocation.Stage.REGISTERED);

            int seen = polls.get();
            await().atMost(Duration.ofSeconds(10)).until(() -> polls.get() >= seen + 20);
            assertThat(p.allocations().get(0).active()).as("the clock has not moved: nothing has been idle 10 s")
                    .isTrue();
            assertThat(nodeAlive).isTrue();

            clock.advanceMillis(10_000);
            await().atMost(Duration.ofSeconds(5)).untilFalse(nodeAlive);
            await().atMost(Duration.ofSeconds(5)).until(() -> !p.allocations().get(0).active());
            assertThat(p.allocations().get(0).at(Allocation.Stage.RELEASED)).isEqualTo(clock.tickMicros() / 1000);
        }
    }
}
