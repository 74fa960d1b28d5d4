package io.falkon.provisioner;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.protocol.TaskSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Multi-level scheduling end to end through one scheduler adapter: a dispatcher that starts with no
 * executors, a provisioner that gets them through the scheduler as tasks queue up, 200 tasks run,
 * and every allocation released once its executors have been idle (distributed release).
 */
abstract class ProvisioningContract {
    @TempDir
    Path work;

    abstract LrmAdapter adapter();

    /** Nodes the scheduler under test has. */
    abstract int maxNodes();

    /** What must hold once everything is released (e.g. the scheduler's queue is empty). */
    void assertSchedulerIdle() throws Exception {
    }

    @Test
    void fromNoExecutorsToTwoHundredTasksAndBackToNone() throws Exception {
        Dispatcher d = Dispatcher.start(DispatcherConfig.local());
        List<String> cmd = LrmAdapterContract.executorCommand(d.port(), work);
        Provisioner.Config config = new Provisioner.Config(new Planner.Bounds(0, maxNodes(), maxNodes(), 2, 600, 0.05),
                AcquisitionPolicy.EXPONENTIAL, ReleasePolicy.distributed(Duration.ofSeconds(2)), cmd,
                Duration.ofMillis(200), work, "e2e", d.token());
        try (Provisioner p = Provisioner.start(config, adapter(), d::status)) {
            d.statusSection("provisioner", p::statusJson);
            assertThat(new ObjectMapper().readTree(d.status()).at("/executors/registered").asInt()).isZero();
            List<CompletableFuture<TaskResult>> results;
            try (FalkonClient client = FalkonClient.connect("127.0.0.1:" + d.port(),
                    ClientOptions.defaults().withToken(d.token()));
                 Instance in = client.createInstance("e2e")) {
                List<TaskSpec> tasks = new ArrayList<>();
                for (int i = 0; i < 200; i++) {
                    tasks.add(TaskSpec.of("/bin/sh", "-c", "sleep 0.05; echo " + i));
                }
                results = in.submit(tasks);
                in.awaitAll();
            }
            for (int i = 0; i < 200; i++) {
                TaskResult r = results.get(i).join();
                assertThat(r.succeeded()).as(r.toString()).isTrue();
                assertThat(r.stdout()).isEqualTo(i + "\n");
                assertThat(r.executorId()).startsWith("e2e-a");
            }
            assertThat(p.allocations()).isNotEmpty();
            // the executors leave after 2 s idle, their jobs end, and the provisioner sees them released
            await().atMost(Duration.ofSeconds(90)).until(() -> p.allocations().stream().noneMatch(Allocation::active));
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> new ObjectMapper().readTree(d.status()).at("/executors/registered").asInt() == 0);
            for (Allocation a : p.allocations()) {
                assertThat(a.at(Allocation.Stage.RUNNING)).as(a.name()).isGreaterThanOrEqualTo(
                        a.at(Allocation.Stage.REQUESTED));
                assertThat(a.at(Allocation.Stage.RELEASED)).as(a.name()).isGreaterThanOrEqualTo(
                        a.at(Allocation.Stage.RUNNING));
                assertThat(a.maxRegistered()).as(a.name()).isEqualTo(a.nodes());
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> new ObjectMapper().readTree(d.status())
                    .at("/provisioner/activeNodes").asInt(-1) == 0);
            JsonNode allocs = new ObjectMapper().readTree(d.status()).at("/provisioner/allocations");
            assertThat(allocs.size()).isEqualTo(p.allocations().size());
            assertThat(allocs.findValuesAsText("stage")).containsOnly("released");
            assertSchedulerIdle();
        } finally {
            d.close();
        }
    }
}
