package io.falkon.e2e.client;

import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Message;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskSpecCodec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import java.time.Duration;
import java.util.Map;

/**
 * Garbage, oversized frames and protocol violations on the dispatcher's port: each closes that
 * connection only, with an ERROR naming the reason and a logged warning, while a well-behaved
 * client and the executors keep working. Request errors leave the connection open.
 */
class HostileInputTest {
    Topology topology;
    FalkonClient good;
    Instance goodInstance;
    List<CompletableFuture<TaskResult>> goodWork = new ArrayList<>();
    ListAppender<ILoggingEvent> logged = new ListAppender<>();

    @BeforeEach
    void start() throws Exception {
        topology = new Topology(1, 2);
        good = topology.client();
        goodInstance = good.createInstance("good");
        logged.start();
        ((Logger) LoggerFactory.getLogger("io.falkon.dispatcher")).addAppender(logged);
        submitGoodWork();
    }

    void submitGoodWork() {
        List<TaskSpec> specs = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            specs.add(TaskSpec.of("/bin/true"));
        }
        goodWork.addAll(goodInstance.submit(specs));
    }

    @AfterEach
    void theGoodClientWasNeverDisturbed() throws Exception {
        submitGoodWork();
        for (CompletableFuture<TaskResult> f : goodWork) {
            assertThat(f.get(60, TimeUnit.SECONDS).succeeded()).isTrue();
        }
        ((Logger) LoggerFactory.getLogger("io.falkon.dispatcher")).detachAppender(logged);
        good.close();
        topology.close();
    }

    /**
     * What was logged so far. The dispatcher's threads go on logging while a test reads (a peer it
     * cut is still leaving), and the appender adds under its own lock, so the list is copied under it.
     */
    private List<ILoggingEvent> logged() {
        synchronized (logged) {
            return new ArrayList<>(logged.list);
        }
    }

    private void assertClosedWith(RawPeer peer, ErrorCode code, String reason) throws Exception {
        Message m = peer.read();
        assertThat(m).isInstanceOf(Message.ErrorMessage.class);
        Message.ErrorMessage e = (Message.ErrorMessage) m;
        assertThat(e.requestId()).isZero();
        assertThat(e.errorCode()).isEqualTo(code);
        assertThat(e.message()).contains(reason);
        assertThat(peer.closedByPeer()).isTrue();
        assertThat(logged()).anySatisfy(ev -> assertThat(ev.getFormattedMessage()).contains(code.name())
                .contains(reason));
    }

    @Test
    void aNewlineInAPeersTextCannotForgeALogLine() throws Exception {
        String forged = "evil\n07:00:00.000 INFO Scheduler - executor FORGED-LINE registered";
        try (RawPeer p = new RawPeer(topology.dispatcher.port())) {
            p.send(Message.Hello.of(Protocol.ROLE_EXECUTOR, topology.dispatcher.token().value(), "raw"));
            p.read();
            p.send(new Message.Register(forged, "host\r\nline", 1, 0, Map.of()));
            p.send(new Message.Credit(1));
            topology.dispatcher.awaitExecutors(2, Duration.ofSeconds(10));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> logged().stream()
                .anyMatch(ev -> ev.getFormattedMessage().contains("FORGED-LINE") && ev.getFormattedMessage()
                        .contains("disconnected")));
        assertThat(logged()).filteredOn(ev -> ev.getFormattedMessage().contains("FORGED-LINE"))
                .isNotEmpty()
                .allSatisfy(ev -> assertThat(ev.getFormattedMessage()).doesNotContain("\n").doesNotContain("\r")
                        .contains("evil\\x0a07:00:00.000"));
        // the status document carries the escaped form too
        assertThat(topology.dispatcher.status()).doesNotContain("evil\\n");
    }

    @Test
    void httpGarbageIsAnOversizedFrame() throws Exception {
        try (RawPeer p = new RawPeer(topology.dispatcher.port())) {
            p.sendBytes("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertClosedWith(p, ErrorCode.FRAME_TOO_LARGE, "frame longer than the maximum");
        }
    }

    @Test
    void anOversizedLengthIsRefusedBeforeAnyOfItIsBuffered() throws Exception {
        try (RawPeer p = new RawPeer(topology.dispatcher.port())) {
            p.sendBytes(new byte[]{0x01, 0x00, 0x00, 0x01}); // 16 MiB + 1
            assertClosedWith(p, ErrorCode.FRAME_TOO_LARGE, "16777216");
        }
    }

    @Test
    void aTruncatedBodyIsMalformed() throws Exception {
        try (RawPeer p = new RawPeer(topology.dispatcher.port())) {
            p.sendBytes(new byte[]{0, 0, 0, 3, 0x01, 0x46, 0x41});
            assertClosedWith(p, ErrorCode.MALFORMED, "HELLO.magic: truncated");
        }
    }

    @Test
    void anUnknownTypeIsMalformed() throws Exception {
        try (RawPeer p = new RawPeer(topology.dispatcher.port())) {
            p.sendBytes(new byte[]{0, 0, 0, 1, (byte) 0xEE});
            assertClosedWith(p, ErrorCode.MALFORMED, "unknown message type 0xee");
        }
    }

    @Test
    void anythingBeforeHelloIsUnexpected() throws Exception {
        try (RawPeer p = new RawPeer(topology.dispatcher.port())) {
            p.send(new Message.Credit(5));
            assertClosedWith(p, ErrorCode.UNEXPECTED_MESSAGE, "CREDIT is not allowed here (expected HELLO)");
        }
    }

    @Test
    void aWrongVersionIsRefused() throws Exception {
        try (RawPeer p = new RawPeer(topology.dispatcher.port())) {
            p.send(new Message.Hello(Protocol.MAGIC, 99, Protocol.ROLE_CLIENT, "", "raw"));
            assertClosedWith(p, ErrorCode.UNSUPPORTED_VERSION, "protocol version 99 is not supported");
        }
    }

    @Test
    void aClientSendingExecutorMessagesIsCut() throws Exception {
        try (RawPeer p = new RawPeer(topology.dispatcher.port())) {
            p.send(Message.Hello.of(Protocol.ROLE_CLIENT, topology.dispatcher.token().value(), "raw"));
            assertThat(p.read()).isInstanceOf(Message.Welcome.class);
            p.send(new Message.Result(10, List.of()));
            assertClosedWith(p, ErrorCode.UNEXPECTED_MESSAGE, "RESULT is not allowed from a client");
        }
    }

    @Test
    void anExecutorSendingClientRequestsIsCut() throws Exception {
        try (RawPeer p = new RawPeer(topology.dispatcher.port())) {
            p.send(Message.Hello.of(Protocol.ROLE_EXECUTOR, topology.dispatcher.token().value(), "raw"));
            assertThat(p.read()).isInstanceOf(Message.Welcome.class);
            p.send(new Message.StatusRequest(1, 0));
            assertClosedWith(p, ErrorCode.UNEXPECTED_MESSAGE, "STATUS_REQUEST is not allowed from an executor");
        }
    }

    @Test
    void anExecutorRegistersFirstAndOnce() throws Exception {
        try (RawPeer p = new RawPeer(topology.dispatcher.port())) {
            p.send(Message.Hello.of(Protocol.ROLE_EXECUTOR, topology.dispatcher.token().value(), "raw"));
            assertThat(p.read()).isInstanceOf(Message.Welcome.class);
            p.send(new Message.Heartbeat(1)); // allowed before REGISTER: it keeps the connection alive
            p.send(new Message.Result(1, List.of()));
            assertClosedWith(p, ErrorCode.UNEXPECTED_MESSAGE, "RESULT is not allowed here (expected REGISTER first)");
        }
        try (RawPeer p = new RawPeer(topology.dispatcher.port())) {
            p.send(Message.Hello.of(Protocol.ROLE_EXECUTOR, topology.dispatcher.token().value(), "raw"));
            assertThat(p.read()).isInstanceOf(Message.Welcome.class);
            p.send(new Message.Register("twice", "raw", 1, 0, Map.of())); // no CREDIT: nothing is sent to it
            p.send(new Message.Register("twice", "raw", 1, 0, Map.of()));
            assertClosedWith(p, ErrorCode.UNEXPECTED_MESSAGE, "REGISTER is allowed once per connection");
        }
    }

    @Test
    void anInvalidTaskRejectsItsBundleButTheConnectionStaysUsable() throws Exception {
        try (RawPeer p = new RawPeer(topology.dispatcher.port())) {
            p.send(Message.Hello.of(Protocol.ROLE_CLIENT, topology.dispatcher.token().value(), "raw"));
            assertThat(p.read()).isInstanceOf(Message.Welcome.class);
            p.send(new Message.CreateInstance(1, "raw", 0));
            long instance = ((Message.InstanceCreated) p.read()).instanceId();
            byte[] good = TaskSpecCodec.encode(TaskSpec.of("/bin/true"));
            byte[] noCommand = new byte[]{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
            p.send(new Message.Submit(2, instance, List.of(new Message.SubmittedTask(0, good),
                    new Message.SubmittedTask(1, noCommand))));
            Message.ErrorMessage e = (Message.ErrorMessage) p.read();
            assertThat(e.requestId()).isEqualTo(2);
            assertThat(e.errorCode()).isEqualTo(ErrorCode.INVALID_TASK);
            assertThat(e.message()).isEqualTo("task 1 of the bundle (clientTaskId 1): argv is empty (a task needs "
                    + "a command); nothing of this bundle was queued");
            p.send(new Message.Submit(3, 0x1234, List.of(new Message.SubmittedTask(0, good))));
            Message.ErrorMessage unknown = (Message.ErrorMessage) p.read();
            assertThat(unknown.errorCode()).isEqualTo(ErrorCode.UNKNOWN_INSTANCE);
            // still usable: a valid bundle is accepted and runs
            p.send(new Message.Submit(4, instance, List.of(new Message.SubmittedTask(7, good))));
            assertThat(p.read()).isEqualTo(new Message.Submitted(4, instance, 1));
            Message.Deliver d = (Message.Deliver) p.read();
            assertThat(d.results()).hasSize(1);
            assertThat(d.results().get(0).clientTaskId()).isEqualTo(7);
            assertThat(d.results().get(0).execution().succeeded()).isTrue();
            assertThat(p.closedByPeer(300)).isFalse();
        }
    }
}
