package io.falkon.protocol.session;

import io.falkon.protocol.GoldenVectors;
import io.falkon.protocol.Message;
import io.falkon.protocol.MessageType;
import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/** The one request/reply tracker of the client connection and the WS gateway. */
class RequestsTest {

    @Test
    void everyReplyTheDispatcherSendsAClientIsFoundAndNothingElseIs() {
        Set<MessageType> replies = EnumSet.of(MessageType.INSTANCE_CREATED, MessageType.SUBMITTED,
                MessageType.STATUS, MessageType.DESTROYED, MessageType.HALTED, MessageType.TASKS_CANCELLED, MessageType.ATTACHED,
                MessageType.ERROR);
        Set<MessageType> seen = EnumSet.noneOf(MessageType.class);
        for (GoldenVectors.Vector v : GoldenVectors.all()) {
            Message m = v.message();
            seen.add(m.type());
            long id = Requests.replyTo(m);
            if (replies.contains(m.type())) {
                assertThat(id).as(v.name()).isNotNegative();
            } else {
                assertThat(id).as(v.name()).isEqualTo(-1);
            }
        }
        assertThat(seen).containsAll(replies);
    }

    @Test
    void aReplyCompletesWhatWaitsForItOnceAndIdsAreNeverZero() {
        Requests r = new Requests();
        Set<Long> ids = new HashSet<>();
        CompletableFuture<Message> first = new CompletableFuture<>();
        long id = r.open(first);
        ids.add(id);
        for (int i = 0; i < 1000; i++) {
            ids.add(r.open(new CompletableFuture<>()));
        }
        assertThat(ids).hasSize(1001).doesNotContain(0L).allSatisfy(i -> assertThat(i).isBetween(1L, 0xFFFF_FFFFL));
        assertThat(r.take(id)).isSameAs(first);
        assertThat(r.take(id)).isNull();
        assertThat(r.takeAll()).hasSize(1000);
        assertThat(r.takeAll()).isEmpty();
    }
}
