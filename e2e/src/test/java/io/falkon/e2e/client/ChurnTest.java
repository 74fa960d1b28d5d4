package io.falkon.e2e.client;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import io.falkon.protocol.TaskSpec;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Many threads submitting through one shared {@link Instance} while its connection is cut again
 * and again: after every reconnection the instance re-attaches and sends again exactly the bundles
 * the dispatcher had not accepted, so every future completes, once, with its own task's result.
 */
class ChurnTest {
    @Test
    void sharedInstanceSurvivesRepeatedCutsWithEveryTaskDoneOnce() throws Exception {
        int threads = 8;
        int perThread = 1500;
        try (Topology t = new Topology(2, 8); CuttingProxy proxy = new CuttingProxy(t.dispatcher.port());
             FalkonClient client = FalkonClient.connect(proxy.address(), ClientOptions.defaults()
                     .withToken(t.dispatcher.token()).withBundleSize(50).withReconnectFor(Duration.ofSeconds(60)))) {
            Instance in = client.createInstance("churn");
            ConcurrentHashMap<Long, AtomicInteger> results = new ConcurrentHashMap<>();
            in.onResult(r -> results.computeIfAbsent(r.taskId(), k -> new AtomicInteger()).incrementAndGet());
            ExecutorService submitters = Executors.newFixedThreadPool(threads);
            List<Future<List<CompletableFuture<TaskResult>>>> work = new ArrayList<>();
            for (int th = 0; th < threads; th++) {
                int thread = th;
                work.add(submitters.submit(() -> {
                    List<CompletableFuture<TaskResult>> mine = new ArrayList<>();
                    for (int i = 0; i < perThread; i++) {
                        // each task says who submitted it, so a result can be matched to its future
                        mine.add(in.submit(TaskSpec.of("/bin/echo", thread + ":" + i)));
                    }
                    return mine;
                }));
            }
            // cut while submissions and results are in flight, each time once the instance has come
            // back and made progress
            int cuts = 0;
            while (cuts < 10 && results.size() < threads * perThread * 9 / 10) {
                int connections = proxy.accepted();
                proxy.cutAll();
                cuts++;
                int before = results.size();
                await().atMost(Duration.ofSeconds(60)).until(() -> proxy.accepted() > connections
                        && results.size() > before + 100);
            }
            assertThat(cuts).as("cuts with work still in flight").isGreaterThanOrEqualTo(5);
            for (int th = 0; th < threads; th++) {
                List<CompletableFuture<TaskResult>> mine = work.get(th).get(2, TimeUnit.MINUTES);
                for (int i = 0; i < perThread; i++) {
                    TaskResult r = mine.get(i).get(2, TimeUnit.MINUTES);
                    assertThat(r.succeeded()).as("%s", r).isTrue();
                    assertThat(r.stdout()).isEqualTo(th + ":" + i + "\n");
                }
            }
            submitters.shutdown();
            assertThat(results).hasSize(threads * perThread);
            assertThat(results.values()).allSatisfy(n -> assertThat(n.get()).as("results per task").isEqualTo(1));
            assertThat(in.outstanding()).isZero();
        }
    }
}
