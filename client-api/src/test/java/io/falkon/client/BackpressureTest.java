package io.falkon.client;

import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.dispatcher.core.SchedulerConfig;
import io.falkon.executor.Executor;
import io.falkon.executor.ExecutorConfig;
import io.falkon.protocol.TaskSpec;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A dispatcher over its memory budget stops reading from clients; the silence that follows is its
 * own doing and must not be taken for a dead client (found by {@code falkon bench queue} with
 * 10 million tasks: the client was dropped after 15 s of paused reading).
 */
class BackpressureTest {
    @Test
    void aClientTheDispatcherStoppedReadingIsNotDeclaredDead() throws Exception {
        // heartbeats every 2 s: a peer silent for 6 s counts as dead (clients send theirs every 5 s)
        DispatcherConfig cfg = DispatcherConfig.local().withHeartbeatMillis(2000)
                .withScheduler(SchedulerConfig.defaults().withMemoryBudgetBytes(1 << 20));
        try (Dispatcher dispatcher = Dispatcher.start(cfg);
             FalkonClient client = FalkonClient.connect("127.0.0.1:" + dispatcher.port(),
                     // no reconnecting: the connection itself must survive the pause
                     ClientOptions.defaults().withBundleSize(1000).withMaxInFlight(200_000)
                             .withReconnectFor(Duration.ZERO).withToken(dispatcher.token()))) {
            Instance in = client.createInstance("over-budget");
            List<TaskSpec> specs = new ArrayList<>();
            for (int i = 0; i < 60_000; i++) {
                specs.add(TaskSpec.of("/bin/sh", "-c", "process-tile input/tile-" + i + ".fits"));
            }
            // no executor yet: ~10 MB of queued tasks against a 1 MiB budget, so reading pauses
            List<CompletableFuture<TaskResult>> fs = in.submit(specs);
            await().atMost(Duration.ofSeconds(30)).until(() -> dispatcher.status().contains("\"queued\""));
            // paused for many times the dead-peer interval, the client must stay connected
            await().during(Duration.ofSeconds(8)).atMost(Duration.ofSeconds(12))
                    .until(() -> fs.stream().noneMatch(CompletableFuture::isDone));
            try (Executor exec = Executor.start(ExecutorConfig.of("127.0.0.1", dispatcher.port()).withId("drain")
                    .withSlots(1000).withNoExec(true).withToken(dispatcher.token()))) {
                CompletableFuture.allOf(fs.toArray(CompletableFuture<?>[]::new)).get(120, TimeUnit.SECONDS);
                assertThat(fs).allSatisfy(f -> assertThat(f.join().succeeded()).as(f.join().toString()).isTrue());
            }
        }
    }
}
