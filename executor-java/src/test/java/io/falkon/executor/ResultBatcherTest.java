package io.falkon.executor;

import io.falkon.protocol.Execution;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskStatus;
import io.falkon.protocol.time.Clock;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Results travel on the connection their tasks came on, and on no other: the generation is checked
 * when the frame is written, because the connection may be lost between a task finishing and its
 * result being flushed (the dispatcher has re-queued that task already).
 */
class ResultBatcherTest {
    private final EmbeddedChannel channel = new EmbeddedChannel();
    private final AtomicInteger generation = new AtomicInteger(1);
    private final ResultBatcher batcher = new ResultBatcher(channel.eventLoop(), () -> channel, generation::get,
            new Prefetch(0, 2, false), () -> 0, Clock.SYSTEM, () -> { });

    private static Message.TaskResult result(long taskId) {
        return new Message.TaskResult(taskId, 1, Execution.of(TaskStatus.EXITED, "", 1_000));
    }

    @Test
    void resultsOfTheCurrentConnectionShareOneFrameWithTheirCredits() {
        batcher.add(1, 1, result(7));
        batcher.add(1, 1, result(8));
        channel.runPendingTasks();
        Message.Result frame = channel.readOutbound();
        assertThat(frame.results()).extracting(Message.TaskResult::taskId).containsExactly(7L, 8L);
        assertThat(frame.credits()).isEqualTo(2);
        assertThat(batcher.unsent()).isZero();
    }

    @Test
    void aTaskOfSeveralCoresReturnsACreditForEachCore() {
        batcher.add(1, 4, result(7));
        batcher.add(1, 1, result(8));
        channel.runPendingTasks();
        Message.Result frame = channel.readOutbound();
        assertThat(frame.credits()).isEqualTo(5);
    }

    @Test
    void aResultWhoseConnectionWasLostBeforeTheFlushNeverReachesTheNextOne() {
        batcher.add(1, 1, result(7));
        generation.set(2); // the connection was lost and a new one made before the I/O thread flushed
        batcher.add(2, 1, result(9));
        channel.runPendingTasks();
        Message.Result frame = channel.readOutbound();
        assertThat(frame.results()).extracting(Message.TaskResult::taskId).containsExactly(9L);
        assertThat(frame.credits()).as("no credit for a task this connection never sent").isEqualTo(1);
        assertThat(channel.outboundMessages()).isEmpty();
        assertThat(batcher.unsent()).isZero();
    }

    @Test
    void aResultFinishingAfterItsConnectionIsGoneIsDroppedAtOnce() {
        generation.set(2);
        batcher.add(1, 1, result(7));
        channel.runPendingTasks();
        assertThat(channel.outboundMessages()).isEmpty();
        assertThat(batcher.unsent()).isZero();
    }
}
