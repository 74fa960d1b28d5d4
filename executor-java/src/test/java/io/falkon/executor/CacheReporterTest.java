package io.falkon.executor;

import io.falkon.protocol.Message;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Cache changes wait a moment for company, then go to the dispatcher as one update of each object's last change. */
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
}
