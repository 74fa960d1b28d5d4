package io.falkon.e2e.client;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.transport.ws.WsTransport;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.TaskSpec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import java.time.Duration;

/**
 * Tasks whose bundles would outgrow one message: the client cuts SUBMITs by bytes, and the
 * dispatcher cuts DISPATCHes to an executor by bytes, so nothing reaches a peer over its frame
 * limit (the executor used to drop its connection on such a frame, taking other clients' tasks
 * with it). The executor here runs no processes (no-exec mode): what is tested is the transport,
 * and a 10 MB command line could not be exec'd anyway.
 */
class LargeTaskTest {
    static final int TEN_MB = 10_000_000;
    static Topology topology;

    @BeforeAll
    static void start() throws Exception {
        topology = new Topology(DispatcherConfig.local().withMaxTaskBytes(TEN_MB + 100_000)
                .withWs(0, WsTransport.Settings.defaults()), 0, 1);
        topology.addExecutor("no-exec", 8, true);
        topology.dispatcher.awaitExecutors(1, Duration.ofSeconds(30));
    }

    @AfterAll
    static void stop() {
        topology.close();
    }

    private static TaskSpec sized(int bytes, int i) {
        return TaskSpec.of("/bin/echo", Integer.toString(i), "x".repeat(bytes));
    }

    private static void assertAllSucceed(List<CompletableFuture<TaskResult>> fs) throws Exception {
        for (CompletableFuture<TaskResult> f : fs) {
            TaskResult r = f.get(120, TimeUnit.SECONDS);
            assertThat(r.succeeded()).as("%s", r.status()).isTrue();
        }
    }

    @Test
    void twoTenMegabyteTasksInOneBundleReachOneExecutorInSeparateFrames() throws Exception {
        try (FalkonClient big = topology.client(ClientOptions.defaults().withBundleSize(100));
             FalkonClient other = topology.client()) {
            Instance bystander = other.createInstance("bystander");
            List<CompletableFuture<TaskResult>> small = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                small.add(bystander.submit(TaskSpec.of("/bin/true")));
            }
            List<CompletableFuture<TaskResult>> large = big.createInstance("large")
                    .submit(List.of(sized(TEN_MB, 1), sized(TEN_MB, 2)));
            assertAllSucceed(large);
            assertAllSucceed(small);
            assertThat(topology.dispatcher.status()).contains("\"registered\":1");
        }
    }

    @Test
    void aBundleOfManyLargeTasksIsCutToFitOneMessageOverTcpAndWs() throws Exception {
        // 40 x 900 KB with a bundle size of 100: 36 MB, more than twice the 16 MiB frame limit
        List<TaskSpec> specs = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            specs.add(sized(900_000, i));
        }
        assertThat(40L * 900_000).isGreaterThan(2L * Protocol.DEFAULT_MAX_FRAME_LENGTH);
        ClientOptions opts = ClientOptions.defaults().withBundleSize(100).withToken(topology.dispatcher.token());
        try (FalkonClient tcp = topology.client(opts);
             FalkonClient ws = FalkonClient.connect(topology.dispatcher.wsUrl(), opts)) {
            assertAllSucceed(tcp.createInstance("cut-tcp").submit(specs));
            assertAllSucceed(ws.createInstance("cut-ws").submit(specs));
        }
    }

    @Test
    void aTaskNoMessageCouldCarryIsRefusedAtOnceByTheClient() throws Exception {
        try (FalkonClient c = topology.client(); Instance in = c.createInstance("too-big")) {
            assertThatThrownBy(() -> in.submit(sized(Protocol.DEFAULT_MAX_FRAME_LENGTH, 0)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("/bin/echo").hasMessageContaining("more than one message");
            assertThat(in.submit(TaskSpec.of("/bin/true")).get(30, TimeUnit.SECONDS).succeeded()).isTrue();
        }
    }
}
