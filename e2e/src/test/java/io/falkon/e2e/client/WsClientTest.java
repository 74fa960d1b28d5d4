package io.falkon.e2e.client;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.FalkonException;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.transport.ws.WsTransport;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskStatus;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import java.util.concurrent.CopyOnWriteArrayList;

/** {@link FalkonClient} given an {@code http://} address: the same API over the WS interface. */
class WsClientTest {

    private static Topology topology() throws Exception {
        return new Topology(DispatcherConfig.local().withWs(0, WsTransport.Settings.defaults()), 2, 2);
    }

    @Test
    void theClientLibraryWorksTheSameOverWs() throws Exception {
        try (Topology t = topology();
             FalkonClient client = FalkonClient.connect(t.dispatcher.wsUrl(), ClientOptions.defaults().withBundleSize(3)
                     .withToken(t.dispatcher.token()));
             Instance in = client.createInstance("over-ws")) {
            List<CompletableFuture<TaskResult>> fs = in.submit(List.of(
                    TaskSpec.shell("echo hello; echo oops >&2"),
                    TaskSpec.shell("exit 7"),
                    TaskSpec.builder("/bin/sh", "-c", "printf %s \"$X\"").env("X", "from-env").build(),
                    TaskSpec.builder("/bin/sleep", "10").wallTime(Duration.ofMillis(300)).build()));
            TaskResult hello = fs.get(0).get(30, TimeUnit.SECONDS);
            assertThat(hello.succeeded()).isTrue();
            assertThat(hello.stdout()).isEqualTo("hello\n");
            assertThat(hello.stderr()).isEqualTo("oops\n");
            assertThat(hello.executorId()).startsWith("exec-");
            assertThat(fs.get(1).get(30, TimeUnit.SECONDS).exitCode()).isEqualTo(7);
            assertThat(fs.get(2).get(30, TimeUnit.SECONDS).stdout()).isEqualTo("from-env");
            assertThat(fs.get(3).get(30, TimeUnit.SECONDS).status()).isEqualTo(TaskStatus.TIMEOUT);
            assertThat(new ObjectMapper().readTree(in.status()).path("completed").asLong()).isEqualTo(4);
            assertThat(new ObjectMapper().readTree(client.status()).path("executors").path("registered").asInt())
                    .isEqualTo(2);
        }
    }

    @Test
    void manyBundlesInFlightAllComplete_andCloseDestroysTheInstance() throws Exception {
        try (Topology t = topology()) {
            int n = 2_000;
            try (FalkonClient client = FalkonClient.connect(t.dispatcher.wsUrl(),
                    ClientOptions.defaults().withBundleSize(250).withMaxInFlight(1_000).withToken(t.dispatcher.token()))) {
                Instance in = client.createInstance("sweep");
                List<CompletableFuture<TaskResult>> fs = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    fs.add(in.submit(TaskSpec.of("/bin/true")));
                }
                in.awaitAll();
                assertThat(fs).allSatisfy(f -> assertThat(f.join().succeeded()).isTrue());
                assertThat(fs.stream().map(f -> f.join().taskId()).distinct().count()).isEqualTo(n);
                in.close();
                assertThat(new ObjectMapper().readTree(client.status()).path("instances").asInt()).isZero();
            }
        }
    }

    @Test
    void anInstanceIsTakenOverWithItsKeyAndOnlyWithIt() throws Exception {
        try (Topology t = topology();
             FalkonClient first = FalkonClient.connect(t.dispatcher.wsUrl(),
                     ClientOptions.defaults().withToken(t.dispatcher.token()))) {
            Instance in = first.createInstance("handed-over");
            in.submit(TaskSpec.of("/bin/echo", "before")).get(30, TimeUnit.SECONDS);
            // let go as falkon submit --detach does: this client stops polling (and acknowledging), so
            // results after the takeover can only go to the client that took it over
            String key = in.detach();
            try (FalkonClient second = FalkonClient.connect(t.dispatcher.wsUrl(),
                    ClientOptions.defaults().withToken(t.dispatcher.token()))) {
                String wrong = key.substring(0, key.indexOf('-') + 1) + "0".repeat(32);
                assertThatThrownBy(() -> second.attach(wrong, r -> { })).isInstanceOf(FalkonException.class)
                        .hasMessageContaining("unknown instance");
                List<String> seen = new CopyOnWriteArrayList<>();
                Instance taken = second.attach(key, r -> seen.add(r.stdout().trim()));
                TaskResult more = taken.submit(TaskSpec.of("/bin/echo", "after")).get(30, TimeUnit.SECONDS);
                assertThat(more.stdout()).isEqualTo("after\n");
                assertThat(more.taskId()).as("new ids continue after the instance's").isEqualTo(1);
                taken.close();
            }
        }
    }

    @Test
    void anUnreachableAddressFailsAtConnect() {
        assertThatThrownBy(() -> FalkonClient.connect("http://127.0.0.1:1/axis2/services/Falkon",
                ClientOptions.defaults().withConnectTimeout(Duration.ofSeconds(2)).withToken("t")))
                .isInstanceOf(FalkonException.class).hasMessageContaining("127.0.0.1:1");
    }
}
