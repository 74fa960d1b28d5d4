package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.MaxCacheHit;
import io.falkon.protocol.Message;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.falkon.dispatcher.core.SchedulerHarness.dispatched;
import static org.assertj.core.api.Assertions.assertThat;

/** The data-aware window admits queued tasks in queue order, whatever leaves the queue meanwhile. */
class WindowAdmissionTest {
    private final SchedulerHarness h = new SchedulerHarness(new MaxCacheHit(),
            SchedulerConfig.defaults().withWindowSize(2), Journal.NONE);

    @Test
    void cancellingTheNextTaskToAdmitDoesNotStrandTheTasksBehindIt() {
        FakeLink exec = h.executor("e", 1, 1);
        FakeLink a = h.client("a");
        FakeLink b = h.client("b");
        h.submit(a, 1);
        List<Message.DispatchedTask> first = dispatched(exec); // a's first task holds the only slot
        assertThat(first).hasSize(1);
        h.submit(a, 3); // queued, the first of them next to enter the window
        h.submit(b, 2, io.falkon.protocol.TaskSpec.builder("/bin/true").priority(-1).build()); // behind them
        h.scheduler.handle(Event.client(a, new Message.Destroy(99, h.instanceOf(a))));
        h.scheduler.endBatch();
        h.complete(exec, first);
        List<Message.DispatchedTask> next = dispatched(exec);
        assertThat(next).as("b's tasks enter the window once a's are cancelled").hasSize(1);
        h.complete(exec, next);
        assertThat(dispatched(exec)).hasSize(1);
        assertThat(h.scheduler.queuedCount()).isZero();
    }
}
