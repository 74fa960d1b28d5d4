package io.falkon.e2e.wire;

import io.falkon.client.Connection;
import io.falkon.client.FalkonException;
import io.falkon.client.ResultSink;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.transport.ws.WsTransport;
import io.falkon.executor.Executor;
import io.falkon.executor.ExecutorConfig;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskSpecCodec;
import io.falkon.protocol.TaskStatus;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import io.falkon.client.ConnectionLostException;

/**
 * What every {@link Connection} must do, whatever carries it (TCP frames, SOAP over HTTP): the
 * operations an {@code Instance} builds on, each future completed on the connection's serial
 * {@link Connection#executor()} thread and every {@link ResultSink} call made there too, refusals
 * as {@link FalkonException}s with their code, and a bundle sent again queued once. One subclass
 * per transport, against a real dispatcher and executor on 127.0.0.1 (the in-process transport's
 * is in its own module, which is why this is public).
 */
public abstract class ConnectionContract {
    protected static Dispatcher dispatcher;
    static Executor executor;
    protected Connection connection;
    Thread ioThread;

    /** Connects this transport to {@link #dispatcher}. */
    protected abstract Connection connect();

    @BeforeAll
    static void start() throws Exception {
        dispatcher = Dispatcher.start(DispatcherConfig.local().withWs(0, WsTransport.Settings.defaults()));
        executor = Executor.start(ExecutorConfig.of("127.0.0.1", dispatcher.port()).withId("contract").withSlots(4)
                .withToken(dispatcher.token()));
        dispatcher.awaitExecutors(1, Duration.ofSeconds(30));
    }

    @AfterAll
    static void stop() {
        executor.close();
        dispatcher.close();
    }

    @BeforeEach
    void open() throws Exception {
        connection = connect();
        ioThread = CompletableFuture.supplyAsync(Thread::currentThread, connection.executor()).get(10, TimeUnit.SECONDS);
    }

    @AfterEach
    void closeConnection() {
        connection.close();
    }

    /**
     * Makes a call while the I/O thread is held busy, so that the call cannot complete before an
     * observer is attached; then checks that the observer ran on the I/O thread, and returns the value.
     */
    <T> T onIoThread(Supplier<CompletableFuture<T>> call) throws Exception {
        CountDownLatch hold = new CountDownLatch(1);
        connection.executor().execute(() -> {
            try {
                hold.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        CompletableFuture<T> f = call.get();
        CompletableFuture<Thread> where = f.handle((v, e) -> Thread.currentThread());
        hold.countDown();
        assertThat(where.get(30, TimeUnit.SECONDS)).as("the thread that completed it").isSameAs(ioThread);
        return f.get(30, TimeUnit.SECONDS);
    }

    static List<Message.SubmittedTask> bundle(long firstId, int n) {
        List<Message.SubmittedTask> b = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            b.add(new Message.SubmittedTask(firstId + i, TaskSpecCodec.encode(TaskSpec.of("/bin/echo", "t" + i))));
        }
        return b;
    }

    /** A sink that records what it gets and on which thread. */
    public static final class Sink implements ResultSink {
        final List<Message.DeliveredResult> results = new CopyOnWriteArrayList<>();
        public final List<Thread> threads = new CopyOnWriteArrayList<>();

        @Override
        public void deliver(List<Message.DeliveredResult> rs) {
            threads.add(Thread.currentThread());
            results.addAll(rs);
        }

        @Override
        public void reconnected() {
            threads.add(Thread.currentThread());
        }

        @Override
        public void connectionLost(Throwable cause) {
            threads.add(Thread.currentThread());
        }
    }

    @Test
    void everyOperationCompletesOnTheIoThreadAndResultsArriveThere() throws Exception {
        Message.InstanceCreated created = onIoThread(() -> connection.createInstance("contract", 60));
        assertThat(created.instanceId()).isNotZero();
        assertThat(created.secret()).hasSize(32);
        Sink sink = new Sink();
        connection.route(created.instanceId(), sink);
        assertThat(onIoThread(() -> connection.submit(created.instanceId(), bundle(0, 3)))).isEqualTo(3);
        await().atMost(Duration.ofSeconds(30)).until(() -> sink.results.size() == 3);
        assertThat(sink.results).extracting(Message.DeliveredResult::clientTaskId).containsExactlyInAnyOrder(0L, 1L, 2L);
        assertThat(sink.threads).isNotEmpty().allMatch(t -> t == ioThread);
        long last = sink.results.stream().mapToLong(Message.DeliveredResult::seq).max().orElseThrow();
        connection.ack(created.instanceId(), last);
        assertThat(onIoThread(() -> connection.status(created.instanceId()))).contains("\"completed\":3");
        assertThat(onIoThread(() -> connection.status(0))).contains("\"executors\"");
        assertThat(onIoThread(() -> connection.destroy(created.instanceId()))).isZero();
    }

    @Test
    void aBundleSentAgainIsAnsweredAcceptedAndQueuedOnce() throws Exception {
        Message.InstanceCreated created = onIoThread(() -> connection.createInstance("again", 60));
        Sink sink = new Sink();
        connection.route(created.instanceId(), sink);
        List<Message.SubmittedTask> b = bundle(10, 2);
        assertThat(onIoThread(() -> connection.submit(created.instanceId(), b))).isEqualTo(2);
        assertThat(onIoThread(() -> connection.submit(created.instanceId(), b))).as("the same bundle again")
                .isEqualTo(2);
        await().atMost(Duration.ofSeconds(30)).until(() -> sink.results.size() >= 2);
        assertThat(onIoThread(() -> connection.status(created.instanceId()))).contains("\"completed\":2");
        assertThat(sink.results).hasSize(2);
        // a bundle that reuses one accepted id beside a new one is refused whole, naming the task
        assertThatThrownBy(() -> onIoThread(() -> connection.submit(created.instanceId(), bundle(11, 2))))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(FalkonException.class)
                .hasMessageContaining("already used");
        onIoThread(() -> connection.destroy(created.instanceId()));
    }

    @Test
    void refusalsCarryTheirCode() throws Exception {
        Message.InstanceCreated created = onIoThread(() -> connection.createInstance("refusals", 60));
        assertThatThrownBy(() -> onIoThread(() -> connection.attach(created.instanceId(), "0".repeat(32))))
                .cause().isInstanceOf(FalkonException.class)
                .extracting(e -> ((FalkonException) e).code()).isEqualTo(ErrorCode.UNKNOWN_INSTANCE);
        assertThatThrownBy(() -> onIoThread(() -> connection.submit(created.instanceId(), List.of(
                new Message.SubmittedTask(1, new byte[]{1, 2, 3}))))).cause().isInstanceOf(FalkonException.class)
                .extracting(e -> ((FalkonException) e).code()).isEqualTo(ErrorCode.INVALID_TASK);
        onIoThread(() -> connection.destroy(created.instanceId()));
    }

    @Test
    void someTasksAreCancelledByTheirIdsAndTheInstanceGoesOn() throws Exception {
        Message.InstanceCreated created = onIoThread(() -> connection.createInstance("cancel-some", 60));
        Sink sink = new Sink();
        connection.route(created.instanceId(), sink);
        List<Message.SubmittedTask> sleepers = new ArrayList<>();
        for (int i = 0; i < 6; i++) { // four run on the executor's four slots, two wait
            sleepers.add(new Message.SubmittedTask(i, TaskSpecCodec.encode(TaskSpec.of("/bin/sleep", "600"))));
        }
        assertThat(onIoThread(() -> connection.submit(created.instanceId(), sleepers))).isEqualTo(6);
        assertThat(onIoThread(() -> connection.cancelTasks(created.instanceId(), new long[]{1, 5, 99})))
                .as("1 and 5 unfinished; 99 is no task").isEqualTo(2);
        await().atMost(Duration.ofSeconds(30)).until(() -> sink.results.size() == 2);
        assertThat(sink.results).extracting(Message.DeliveredResult::clientTaskId).containsExactlyInAnyOrder(1L, 5L);
        assertThat(sink.results).allSatisfy(r -> assertThat(r.execution().status()).isEqualTo(TaskStatus.CANCELLED));
        assertThat(onIoThread(() -> connection.status(created.instanceId()))).contains("\"cancelled\":2");
        assertThat(onIoThread(() -> connection.destroy(created.instanceId()))).as("the other four").isEqualTo(4);
    }

    @Test
    void aClosedConnectionFailsItsCallsAsLost() throws Exception {
        assertThat(connection.maxBundleBytes()).isPositive();
        assertThat(connection.connected()).isTrue();
        connection.close();
        assertThat(connection.connected()).isFalse();
        assertThatThrownBy(() -> connection.status(0).get(30, TimeUnit.SECONDS))
                .cause().isInstanceOf(ConnectionLostException.class);
    }
}
