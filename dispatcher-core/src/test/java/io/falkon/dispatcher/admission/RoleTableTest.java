package io.falkon.dispatcher.admission;

import io.falkon.dispatcher.core.Journal;
import io.falkon.dispatcher.core.RecordingLink;
import io.falkon.dispatcher.core.Scheduler;
import io.falkon.dispatcher.core.SchedulerConfig;
import io.falkon.dispatcher.core.SchedulerLoop;
import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.protocol.GoldenVectors;
import io.falkon.protocol.Message;
import io.falkon.protocol.MessageType;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.time.Clock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The role table in front of a real scheduler thread, with one message of every type (the golden
 * vectors): what a role may not send is refused with a reason naming the type and the role, and
 * never reaches the scheduler (which would stop on a type it has no handler for); what it may
 * send does. An executor registers first and once.
 */
class RoleTableTest {
    private final Token token = Token.random();
    private final SchedulerLoop loop = new SchedulerLoop(new Scheduler(new FirstAvailable(), Clock.SYSTEM, "d",
            SchedulerConfig.defaults(), Journal.NONE)).start();
    private final Admission admission = new Admission(loop, token, 1 << 20);

    @AfterEach
    void stop() {
        loop.close();
    }

    private static List<Message> oneOfEveryType() {
        List<Message> all = GoldenVectors.all().stream().map(GoldenVectors.Vector::message).toList();
        assertThat(all.stream().map(Message::type).distinct()).containsExactlyInAnyOrder(MessageType.values());
        return all;
    }

    /** Nothing the scheduler could not handle got to it: its thread is still running and answers. */
    private void assertSchedulerStillServes() {
        CompletableFuture<Boolean> answered = new CompletableFuture<>();
        loop.execute(() -> answered.complete(true));
        await().atMost(10, TimeUnit.SECONDS).until(() -> answered.isDone() || loop.failed().isDone());
        assertThat(loop.failed()).isNotDone();
        assertThat(answered).isCompletedWithValue(true);
    }

    @Test
    void aClientMaySendOnlyClientRequests() {
        EnumSet<MessageType> allowed = EnumSet.of(MessageType.CREATE_INSTANCE, MessageType.SUBMIT,
                MessageType.STATUS_REQUEST, MessageType.DESTROY, MessageType.HALT, MessageType.CANCEL_TASKS,
                MessageType.ATTACH, MessageType.ATTACH_MOVED, MessageType.ACK);
        for (Message m : oneOfEveryType()) {
            Caller client = admission.authenticate(new RecordingLink(), "tcp", Role.CLIENT, token.value());
            String refused = admission.accept(client, m);
            if (allowed.contains(m.type())) {
                assertThat(refused).as(m.type().name()).isNull();
            } else {
                assertThat(refused).as(m.type().name())
                        .startsWith(m.type() + " is not allowed from a client (expected ")
                        .contains("SUBMIT");
            }
        }
        assertSchedulerStillServes();
    }

    @Test
    void anExecutorMaySendOnlyExecutorMessagesAfterRegisteringOnce() {
        EnumSet<MessageType> allowed = EnumSet.of(MessageType.REGISTER, MessageType.CREDIT, MessageType.RESULT,
                MessageType.CACHE_UPDATE);
        int n = 0;
        for (Message m : oneOfEveryType()) {
            RecordingLink link = new RecordingLink();
            Caller executor = admission.authenticate(link, "tcp", Role.EXECUTOR, token.value());
            Message register = new Message.Register("e" + n++, "h", 1, 0, Map.of());
            if (m.type() != MessageType.REGISTER) {
                assertThat(admission.accept(executor, m)).as(m.type() + " first")
                        .isEqualTo(allowed.contains(m.type()) ? m.type() + " is not allowed here (expected REGISTER first)"
                                : m.type() + " is not allowed from an executor (expected REGISTER, CREDIT, RESULT, "
                                + "CACHE_UPDATE)");
            }
            assertThat(admission.accept(executor, register)).isNull();
            assertThat(admission.accept(executor, register)).isEqualTo("REGISTER is allowed once per connection");
            if (allowed.contains(m.type()) && m.type() != MessageType.REGISTER) {
                assertThat(admission.accept(executor, m)).as(m.type().name()).isNull();
            }
            admission.gone(executor);
        }
        assertSchedulerStillServes();
    }

    @Test
    void aCallerNeedsTheToken() {
        assertThat(admission.authenticate(new RecordingLink(), "tcp", Role.EXECUTOR, "not the token")).isNull();
        assertThat(admission.authenticate(new RecordingLink(), "tcp", Role.CLIENT, "")).isNull();
    }
}
