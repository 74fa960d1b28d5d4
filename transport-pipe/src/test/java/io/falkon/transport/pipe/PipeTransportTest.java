package io.falkon.transport.pipe;

import io.falkon.dispatcher.admission.Admission;
import io.falkon.dispatcher.core.Journal;
import io.falkon.dispatcher.core.Scheduler;
import io.falkon.dispatcher.core.SchedulerConfig;
import io.falkon.dispatcher.core.SchedulerLoop;
import io.falkon.dispatcher.core.StatusSnapshot;
import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Message;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.time.Clock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The pipes of {@code falkon run}'s own executors, tried as a hostile child would: each test is a
 * child on a pair of real pipes speaking (or breaking) the protocol, against the real admission
 * stage and scheduler. Whatever breaks the protocol gets an ERROR naming it, then the end of its
 * input, and is logged; the dispatcher goes on.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PipeTransportTest {
    private static final String TOKEN = "the-run-token";
    private static final int MAX_FRAME = 4096;
    private static final long HANDSHAKE_MILLIS = 300;

    private SchedulerLoop loop;
    private Admission admission;
    private PipeTransport transport;
    private Child child;

    @BeforeEach
    void start() throws IOException {
        loop = new SchedulerLoop(new Scheduler(new FirstAvailable(), Clock.SYSTEM, "d", SchedulerConfig.defaults(),
                Journal.NONE)).start();
        admission = new Admission(loop, Token.of(TOKEN), 1 << 20);
        transport = new PipeTransport(admission, new PipeTransport.Settings("d-pipe", MAX_FRAME, HANDSHAKE_MILLIS));
        child = new Child();
        transport.attach("local executor 0", child.fromChild, child.toChild);
    }

    @AfterEach
    void stop() throws IOException {
        child.exit();
        transport.close();
        child.close();
        loop.close();
    }

    private static Message.Hello hello(String token) {
        return Message.Hello.of(Protocol.ROLE_EXECUTOR, token, "test-child");
    }

    /** The child is refused with {@code code}, then its input ends; the refusal was logged. */
    private void assertRefused(ErrorCode code, String why, long refusedBefore) throws IOException {
        Message answer = child.read();
        assertThat(answer).isInstanceOfSatisfying(Message.ErrorMessage.class, e -> {
            assertThat(e.errorCode()).isEqualTo(code);
            assertThat(e.message()).contains(why);
        });
        assertThat(child.read()).as("then the end of its input").isNull();
        await().atMost(Duration.ofSeconds(30)).until(() -> admission.badRequests().total() > refusedBefore);
        assertThat(loop.failed()).isNotDone();
    }

    private int executorsRegistered() throws Exception {
        CompletableFuture<StatusSnapshot> f = new CompletableFuture<>();
        loop.execute(() -> f.complete(loop.scheduler().snapshot()));
        return f.get(30, TimeUnit.SECONDS).executorsRegistered();
    }

    @Test
    void aChildWithTheTokenIsWelcomedWithoutHeartbeats() throws Exception {
        child.send(hello(TOKEN));
        Message answer = child.read();
        assertThat(answer).isInstanceOfSatisfying(Message.Welcome.class, w -> {
            assertThat(w.version()).isEqualTo(Protocol.VERSION);
            assertThat(w.heartbeatMillis()).as("a child's pipes close when it exits: no heartbeats").isZero();
            assertThat(w.maxFrameLength()).isEqualTo(MAX_FRAME);
            assertThat(w.dispatcherId()).isEqualTo("d-pipe");
        });
        assertThat(transport.port()).as("nothing listens").isEqualTo(-1);
    }

    @Test
    void aChildThatExitsIsForgottenByTheScheduler() throws Exception {
        child.send(hello(TOKEN));
        assertThat(child.read()).isInstanceOf(Message.Welcome.class);
        child.send(new Message.Register("e-1", "localhost", 2, 0, Map.of()));
        await().atMost(Duration.ofSeconds(30)).until(() -> executorsRegistered() == 1);
        child.exit();
        await().atMost(Duration.ofSeconds(30)).until(() -> executorsRegistered() == 0);
    }

    @Test
    void aChildWithoutTheTokenIsRefused() throws Exception {
        long before = admission.badRequests().total();
        child.send(hello("not-the-token"));
        assertRefused(ErrorCode.UNAUTHORIZED, "wrong token", before);
    }

    @Test
    void aFrameOverTheLimitIsRefusedBeforeItsBodyIsRead() throws Exception {
        long before = admission.badRequests().total();
        // the length alone, a gigabyte: the refusal comes without the body ever being sent
        child.raw(ByteBuffer.allocate(4).putInt(1 << 30).array());
        assertRefused(ErrorCode.FRAME_TOO_LARGE, "maximum of " + MAX_FRAME, before);
    }

    @Test
    void aLengthOverTwoGigabytesIsRefusedToo() throws Exception {
        long before = admission.badRequests().total();
        child.raw(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff});
        assertRefused(ErrorCode.FRAME_TOO_LARGE, "maximum of " + MAX_FRAME, before);
    }

    @Test
    void aMalformedFrameIsRefusedNamingWhatIsWrong() throws Exception {
        long before = admission.badRequests().total();
        child.raw(new byte[] {0, 0, 0, 1, (byte) 0xee}); // one byte: a message type that does not exist
        assertRefused(ErrorCode.MALFORMED, "unknown message type 0xee", before);
    }

    @Test
    void aMessageBeforeHelloIsRefused() throws Exception {
        long before = admission.badRequests().total();
        child.send(new Message.Register("e-1", "localhost", 2, 0, Map.of()));
        assertRefused(ErrorCode.UNEXPECTED_MESSAGE, "expected HELLO", before);
        assertThat(executorsRegistered()).isZero();
    }

    @Test
    void aSilentChildIsClosedAfterTheHandshakeTimeout() throws Exception {
        long before = admission.badRequests().total();
        assertRefused(ErrorCode.HANDSHAKE_TIMEOUT, "no HELLO within " + HANDSHAKE_MILLIS + " ms", before);
    }

    @Test
    void closingTheTransportEndsEveryChildsInputAfterWhatWasQueued() throws Exception {
        child.send(hello(TOKEN));
        assertThat(child.read()).isInstanceOf(Message.Welcome.class);
        Thread closing = new Thread(transport::close, "closing");
        closing.start();
        assertThat(child.read()).as("the end of the child's input").isNull();
        child.exit(); // as a real child does on reading the end
        closing.join(30_000);
        assertThat(closing.isAlive()).isFalse();
    }

    @Test
    void aChildAttachedAfterTheCloseIsEndedAtOnce() throws Exception {
        transport.close();
        try (Child late = new Child()) {
            transport.attach("late", late.fromChild, late.toChild);
            late.exit();
            assertThat(late.read()).isNull();
        }
    }
}
