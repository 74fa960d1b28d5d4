package io.falkon.dispatcher.core;

import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Message;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What every {@link Link} must do for the scheduler, whatever carries its messages (a socket, a
 * WS caller's queue, a client in the same process): buffer a batch and say when it became dirty,
 * send nothing until the batch's flush runs, then everything in order; close after what is
 * buffered, with the reason last; ignore what comes after the close. One subclass per transport,
 * each with the real peer on the other side (a socket on 127.0.0.1 where there is one).
 */
public abstract class LinkContract {
    /** What the peer has received so far, in order (the close's reason included, where it gets one). */
    protected final List<Message> received = new CopyOnWriteArrayList<>();
    /** Set when the peer has seen the link end. */
    protected volatile boolean ended;

    /**
     * A new link, called on the test's thread as the scheduler thread, whose peer adds what it gets
     * to {@link #received} and sets {@link #ended} when the link ends.
     */
    protected abstract Link open() throws Exception;

    private static Message status(int n) {
        return new Message.Status(n, "{\"n\":" + n + "}");
    }

    private void awaitReceived(int n) {
        await().atMost(Duration.ofSeconds(30)).until(() -> received.size() >= n);
    }

    @Test
    void aBatchIsSentWhenItsFlushRunsAndInOrder() throws Exception {
        Link link = open();
        assertThat(link.takeFlush()).as("nothing buffered").isNull();
        assertThat(link.enqueue(status(1))).as("the first message dirties the link").isTrue();
        assertThat(link.enqueue(status(2))).isFalse();
        assertThat(link.enqueue(status(3))).isFalse();
        Runnable flush = link.takeFlush();
        assertThat(flush).isNotNull();
        assertThat(link.takeFlush()).as("taken").isNull();
        assertThat(received).as("nothing goes before the flush runs").isEmpty();
        flush.run();
        awaitReceived(3);

        assertThat(link.enqueue(status(4))).as("a new batch dirties it again").isTrue();
        link.takeFlush().run();
        awaitReceived(4);
        List<Long> ids = new ArrayList<>();
        for (Message m : received) {
            ids.add(((Message.Status) m).requestId());
        }
        assertThat(ids).containsExactly(1L, 2L, 3L, 4L);
    }

    @Test
    void aCloseSendsWhatIsBufferedThenEndsTheLinkAndIgnoresWhatComesAfter() throws Exception {
        Link link = open();
        link.enqueue(status(1));
        link.close(Message.ErrorMessage.of(0, ErrorCode.SHUTTING_DOWN, "the dispatcher is shutting down"));
        await().atMost(Duration.ofSeconds(30)).until(() -> ended);
        assertThat(received).first().isInstanceOfSatisfying(Message.Status.class,
                s -> assertThat(s.requestId()).isEqualTo(1));
        int seen = received.size();
        link.enqueue(status(2)); // the scheduler may still enqueue before it hears of the end
        Runnable flush = link.takeFlush();
        if (flush != null) {
            flush.run();
        }
        link.close(null); // and close twice
        assertThat(received).hasSize(seen);
    }

    @Test
    void itNamesItsPeer() throws Exception {
        Link link = open();
        assertThat(link.remote()).isNotBlank();
        assertThat(link.remoteHost()).isNotBlank();
    }
}
