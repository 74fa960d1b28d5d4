package io.falkon.executor;

import io.falkon.protocol.Execution;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskStatus;
import io.falkon.protocol.time.Clock;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Cache changes wait a moment for company, then go to the dispatcher as one update of each object's
 * last change; results never overtake them.
 */
class CacheReporterTest {
    private final EmbeddedChannel channel = new EmbeddedChannel();
    private final CacheReporter reporter = new CacheReporter(channel.eventLoop(), () -> channel);

    @Test
    void aBurstOfChangesIsOneUpdateOfEachObjectsLastChangeOnceDue() {
        channel.freezeTime();
        reporter.added("a", 10);
        reporter.added("b", 5);
        reporter.removed("a");
        reporter.added("c", 7);
        reporter.added("a", 20);
        reporter.removed("b");
        channel.runPendingTasks();
        assertThat(channel.outboundMessages()).as("not before it is due").isEmpty();
        channel.advanceTimeBy(CacheReporter.CHANGES_MILLIS, TimeUnit.MILLISECONDS);
        channel.runPendingTasks();
        Message.CacheUpdate update = channel.readOutbound();
        assertThat(update.full()).isFalse();
        assertThat(update.added()).containsExactlyInAnyOrder(new Message.CachedObject("a", 20),
                new Message.CachedObject("c", 7));
        assertThat(update.removed()).containsExactly("b");
        assertThat(channel.outboundMessages()).as("one message for the burst").isEmpty();
        // the next change starts a burst of its own
        reporter.removed("c");
        channel.advanceTimeBy(CacheReporter.CHANGES_MILLIS, TimeUnit.MILLISECONDS);
        channel.runPendingTasks();
        Message.CacheUpdate next = channel.readOutbound();
        assertThat(next.added()).isEmpty();
        assertThat(next.removed()).containsExactly("c");
    }

    /**
     * A task that cached what it read finishes at once: its result must not reach the dispatcher
     * before the change does, or the next task that needs the object is placed as if nobody had it.
     */
    @Test
    void changesPendingGoAheadOfTheResultsThatFollowThem() {
        channel.freezeTime();
        ResultBatcher results = new ResultBatcher(channel.eventLoop(), () -> channel, () -> 1,
                new Prefetch(0, 1, true), () -> 0, Clock.SYSTEM, reporter::sendPending);
        reporter.added("x", 100);
        results.add(1, 1, new Message.TaskResult(7, 1, Execution.of(TaskStatus.EXITED, "", 1_000)));
        channel.runPendingTasks(); // the result is due now; the change's own time has not come
        Object first = channel.readOutbound();
        assertThat(first).as("the change first").isInstanceOf(Message.CacheUpdate.class);
        assertThat(((Message.CacheUpdate) first).added()).containsExactly(new Message.CachedObject("x", 100));
        Message.Result then = channel.readOutbound();
        assertThat(then.results()).extracting(Message.TaskResult::taskId).containsExactly(7L);
        channel.advanceTimeBy(CacheReporter.CHANGES_MILLIS, TimeUnit.MILLISECONDS);
        channel.runPendingTasks();
        assertThat(channel.outboundMessages()).as("nothing is sent twice").isEmpty();
    }
}
