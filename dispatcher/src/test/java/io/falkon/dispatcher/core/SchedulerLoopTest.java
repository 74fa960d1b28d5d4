package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.protocol.Message;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The scheduler's thread: quiet events keep their place and are handled even if nothing wakes it. */
class SchedulerLoopTest {

    /** A link whose batches record the STATUS replies' request ids, thread-safely. */
    static final class RecordingLink extends BufferedLink {
        final List<Long> replies = new CopyOnWriteArrayList<>();

        @Override
        protected void deliver(List<Message> batch) {
            batch.forEach(m -> replies.add(((Message.Status) m).requestId()));
        }

        @Override
        protected void closed(Message.ErrorMessage error) {
        }

        @Override
        public String remote() {
            return "recording";
        }

        @Override
        public String remoteHost() {
            return "127.0.0.1";
        }
    }

    @Test
    void aQuietEventIsHandledByTheTimerWhenNothingWakesTheLoop() {
        SchedulerLoop loop = new SchedulerLoop(new Scheduler(new FirstAvailable(), Clock.SYSTEM, "d")).start();
        try {
            RecordingLink link = new RecordingLink();
            loop.submitQuietly(Event.client(link, new Message.StatusRequest(7, 0)));
            await().atMost(5, TimeUnit.SECONDS).until(() -> link.replies.equals(List.of(7L)));
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
            await().atMost(5, TimeUnit.SECONDS).until(() -> link.replies.size() == 50);
            assertThat(link.replies).isSorted();
        } finally {
            loop.close();
        }
    }
}
