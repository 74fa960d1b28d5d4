package io.falkon.executor;

import io.falkon.protocol.ExtField;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskSpecCodec;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No-exec benchmark mode, and its emulation of task length ({@code sleep S} held S seconds on a timer).
 * The channel's clock is frozen: an embedded event loop's time otherwise moves with real time as
 * well as with {@code advanceTimeBy}, and a slow machine would fire a timer before the test means to.
 */
class NoExecTest {
    private final EmbeddedChannel channel = new EmbeddedChannel();

    {
        channel.freezeTime();
    }

    private static Message.DispatchedTask task(long id, String... argv) {
        return new Message.DispatchedTask(id, 1, TaskSpecCodec.encode(TaskSpec.of(argv)), ExtField.NONE);
    }

    private List<Long> sent() {
        Message.Result r = channel.readOutbound();
        return r == null ? List.of() : r.results().stream().map(Message.TaskResult::taskId).toList();
    }

    @Test
    void withoutSleepEmulationEveryTaskCompletesAtOnceInOneFrame() {
        new NoExec(channel.eventLoop(), () -> channel, false).complete(channel,
                List.of(task(1, "sleep", "5"), task(2, "/bin/true")));
        assertThat(sent()).containsExactly(1L, 2L);
    }

    @Test
    void aSleepTaskIsHeldForItsLengthAndOthersCompleteAtOnce() {
        new NoExec(channel.eventLoop(), () -> channel, true).complete(channel,
                List.of(task(1, "sleep", "2"), task(2, "/bin/true"), task(3, "/bin/sleep", "0.5"),
                        task(4, "sleep", "2")));
        assertThat(sent()).containsExactly(2L);
        channel.advanceTimeBy(499, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        assertThat(sent()).isEmpty();
        channel.advanceTimeBy(1, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        assertThat(sent()).containsExactly(3L);
        channel.advanceTimeBy(1500, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        assertThat(sent()).as("tasks of one length share a frame").containsExactly(1L, 4L);
    }

    @Test
    void aHeldResultIsDroppedWhenItsConnectionIsGone() {
        EmbeddedChannel next = new EmbeddedChannel();
        EmbeddedChannel[] current = {channel};
        new NoExec(channel.eventLoop(), () -> current[0], true).complete(channel, List.of(task(1, "sleep", "1")));
        current[0] = next; // reconnected meanwhile
        channel.advanceTimeBy(1, TimeUnit.SECONDS);
        channel.runScheduledPendingTasks();
        assertThat(sent()).isEmpty();
        assertThat(next.outboundMessages()).isEmpty();
    }
}
