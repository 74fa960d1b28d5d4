package io.falkon.transport.inprocess;

import io.falkon.dispatcher.admission.Admission;
import io.falkon.dispatcher.core.Scheduler;
import io.falkon.dispatcher.core.SchedulerLoop;
import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Message;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.time.Clock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The dispatcher's end of an in-process connection, against the real scheduler loop: how it ends. */
class InProcessClientTest {
    private final SchedulerLoop loop = new SchedulerLoop(new Scheduler(new FirstAvailable(), Clock.SYSTEM, "d")).start();
    private final Admission admission = new Admission(loop, Token.random(), 1 << 20);
    private final List<Message> received = new CopyOnWriteArrayList<>();
    private final List<Message.ErrorMessage> closes = new CopyOnWriteArrayList<>();
    private final AtomicInteger ends = new AtomicInteger();

    @AfterEach
    void stopLoop() {
        loop.close();
    }

    private InProcessClient connect() {
        return InProcessClient.connect(admission, received::addAll, closes::add, ends::incrementAndGet);
    }

    @Test
    void onlyClientRequestsAreAccepted() {
        try (InProcessClient end = connect()) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> end.send(new Message.Heartbeat(0)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("HEARTBEAT");
        }
    }

    @Test
    void requestsNeedNoTokenAndRepliesComeBackAsMessages() {
        InProcessClient c = connect();
        c.send(new Message.StatusRequest(5, 0));
        await().atMost(5, TimeUnit.SECONDS).until(() -> !received.isEmpty());
        assertThat(received.get(0)).isInstanceOfSatisfying(Message.Status.class,
                s -> assertThat(s.requestId()).isEqualTo(5));
    }

    @Test
    void theClientsCloseEndsItOnceAndALaterStopTellsNobody() {
        InProcessClient c = connect();
        c.close();
        c.close();
        c.stop();
        assertThat(ends).hasValue(1);
        assertThat(closes).isEmpty();
        c.send(new Message.StatusRequest(6, 0));
        // a live client's request after it: once answered, the closed one's would have been too
        List<Message> probe = new CopyOnWriteArrayList<>();
        InProcessClient live = InProcessClient.connect(admission, probe::addAll, e -> { }, () -> { });
        live.send(new Message.StatusRequest(7, 0));
        await().atMost(5, TimeUnit.SECONDS).until(() -> !probe.isEmpty());
        assertThat(received).as("nothing is taken from a closed client").isEmpty();
    }

    @Test
    void aStopTellsTheClientWhyAndEndsItOnce() {
        InProcessClient c = connect();
        c.stop();
        c.close();
        assertThat(ends).hasValue(1);
        assertThat(closes).singleElement().satisfies(e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.SHUTTING_DOWN));
    }
}
