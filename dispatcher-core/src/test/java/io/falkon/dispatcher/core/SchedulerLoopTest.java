package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.protocol.Message;
import io.falkon.protocol.time.Clock;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The scheduler's thread: quiet events keep their place and are handled even if nothing wakes it. */
class SchedulerLoopTest {

    private static List<Long> statusReplies(RecordingLink link) {
        return link.of(Message.Status.class).stream().map(Message.Status::requestId).toList();
    }

    @Test
    void aQuietEventIsHandledByTheTimerWhenNothingWakesTheLoop() {
        SchedulerLoop loop = new SchedulerLoop(new Scheduler(new FirstAvailable(), Clock.SYSTEM, "d")).start();
        try {
            RecordingLink link = new RecordingLink();
            loop.submitQuietly(Event.client(link, new Message.StatusRequest(7, 0)));
            await().atMost(5, TimeUnit.SECONDS).until(() -> statusReplies(link).equals(List.of(7L)));
        } finally {
            loop.close();
        }
    }

    @Test
    void aQuietEventKeepsItsPlaceBeforeTheEventThatWakesTheLoop() {
        SchedulerLoop loop = new SchedulerLoop(new Scheduler(new FirstAvailable(), Clock.SYSTEM, "d")).start();
        try {
            RecordingLink link = new RecordingLink();
            for (long id = 1; id <= 50; id++) {
                if (id % 5 == 0) {
                    loop.submit(Event.client(link, new Message.StatusRequest(id, 0)));
                } else {
                    loop.submitQuietly(Event.client(link, new Message.StatusRequest(id, 0)));
                }
            }
            await().atMost(5, TimeUnit.SECONDS).until(() -> statusReplies(link).size() == 50);
            assertThat(statusReplies(link)).isSorted();
        } finally {
            loop.close();
        }
    }
}
