package io.falkon.e2e.client;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.dispatcher.core.SchedulerConfig;
import io.falkon.transport.ws.WsTransport;
import io.falkon.executor.Executor;
import io.falkon.executor.ExecutorConfig;
import io.falkon.protocol.TaskSpec;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A dispatcher over its memory budget refuses new bundles with BUSY (HTTP 503 over WS); the client
 * holds them and sends them again later, on the same connection, until they are accepted: a
 * submitter faster than the executors is slowed, never dropped, and loses nothing.
 */
class BackpressureTest {
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "ws"})
    void bundlesRefusedOverTheBudgetAreSentAgainUntilEveryTaskRuns(String transport) throws Exception {
        // heartbeats every 2 s: a peer silent for 6 s counts as dead (clients send theirs every 5 s)
        DispatcherConfig cfg = DispatcherConfig.local().withHeartbeatMillis(2000)
                .withWs(0, WsTransport.Settings.defaults())
                .withScheduler(SchedulerConfig.defaults().withMemoryBudgetBytes(1 << 20));
        try (Dispatcher dispatcher = Dispatcher.start(cfg);
             FalkonClient client = FalkonClient.connect(transport.equals("ws") ? dispatcher.wsUrl()
                             : "127.0.0.1:" + dispatcher.port(),
                     // no reconnecting: the connection itself must carry the whole episode
                     ClientOptions.defaults().withBundleSize(1000).withMaxInFlight(200_000)
                             .withReconnectFor(Duration.ZERO).withToken(dispatcher.token()))) {
            Instance in = client.createInstance("over-budget");
            List<TaskSpec> specs = new ArrayList<>();
            for (int i = 0; i < 30_000; i++) {
                specs.add(TaskSpec.of("/bin/sh", "-c", "process-tile input/tile-" + i + ".fits"));
            }
            // no executor yet: ~6 MB of tasks against a 1 MiB budget
            List<CompletableFuture<TaskResult>> fs = in.submit(specs);
            ObjectMapper json = new ObjectMapper();
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                JsonNode mem = json.readTree(dispatcher.status()).path("memory");
                return mem.path("refusingBundles").asBoolean() && mem.path("refusedBundles").asLong() > 2;
            });
            // refused again and again for many times the dead-peer interval: nothing fails meanwhile
            await().during(Duration.ofSeconds(7)).atMost(Duration.ofSeconds(10))
                    .until(() -> fs.stream().noneMatch(CompletableFuture::isDone));
            JsonNode before = json.readTree(dispatcher.status());
            assertThat(before.path("queued").asLong()).isLessThan(specs.size());
            try (Executor exec = Executor.start(ExecutorConfig.of("127.0.0.1", dispatcher.port()).withId("drain")
                    .withSlots(1000).withNoExec(true).withToken(dispatcher.token()))) {
                assertThat(exec.id()).isEqualTo("drain"); // it drains what waited, until it is closed here
                CompletableFuture.allOf(fs.toArray(CompletableFuture<?>[]::new)).get(120, TimeUnit.SECONDS);
                assertThat(fs).allSatisfy(f -> assertThat(f.join().succeeded()).as(f.join().toString()).isTrue());
            }
            JsonNode after = json.readTree(dispatcher.status());
            assertThat(after.path("completed").asLong()).as("each task ran once").isEqualTo(specs.size());
        }
    }
}
