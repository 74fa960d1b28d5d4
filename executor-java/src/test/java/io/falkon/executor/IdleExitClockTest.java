package io.falkon.executor;

import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.protocol.time.FakeClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --idle-exit} counts idle time on the executor's clock, not the machine's: with a fake one
 * frozen, a ten-minute idle time never runs out; moved past it, the executor leaves at its next
 * check (about a second of real time, where the system clock would take ten minutes). Against a
 * real dispatcher on 127.0.0.1.
 */
class IdleExitClockTest {

    @Test
    void anIdleExecutorLeavesWhenItsClockHasPassedTheIdleTime() throws Exception {
        FakeClock clock = new FakeClock(1_000_000_000_000L);
        try (Dispatcher d = Dispatcher.start(DispatcherConfig.local());
             Executor e = Executor.start(ExecutorConfig.of("127.0.0.1", d.port()).withId("idle-clock").withSlots(1)
                     .withToken(d.token()).withIdleExit(Duration.ofMinutes(10)).withClock(clock))) {
            d.awaitExecutors(1, Duration.ofSeconds(30));
            assertThat(e.terminated()).as("no time has passed on its clock").isNotDone();

            clock.advanceMillis(Duration.ofMinutes(10).toMillis());
            assertThat(e.terminated().get(30, TimeUnit.SECONDS)).isEqualTo("idle for 600 s");
        }
    }
}
