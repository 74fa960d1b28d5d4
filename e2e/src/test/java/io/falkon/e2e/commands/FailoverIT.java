package io.falkon.e2e.commands;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.client.ClientOptions;
import io.falkon.client.DistributedClient;
import io.falkon.client.DistributedInstance;
import io.falkon.client.TaskResult;
import io.falkon.protocol.TaskSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Failover for a client of several dispatchers (docs/scaling.md "Failover"), with real processes:
 * three dispatchers, each with one C executor of two slots, run a random 400-task workflow whose
 * tasks pass values to each other through files; one dispatcher is SIGKILLed, SIGSTOPped, or killed
 * and restarted from its journal part-way. Every output is checked against the value the graph
 * gives, every result must arrive once, and each task's runs are logged (the executor's working
 * directory, one line a run) to count what ran twice and where.
 */
class FailoverIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int TASKS = 400;
    /** Shorter than the default (5 s) to keep the test short; the figures use the default. */
    private static final Duration FAILOVER_AFTER = Duration.ofSeconds(2);

    @TempDir
    Path dir;
    @RegisterExtension
    final LogsOnFailure logs = new LogsOnFailure(() -> dir);

    private enum Loss { KILL, STOP, KILL_AND_RESTART }

    /** The graph: each task reads up to two earlier tasks' values and writes its own. */
    private record Graph(int[][] deps, long[] values) {
        static Graph random(long seed) {
            Random r = new Random(seed);
            int[][] deps = new int[TASKS][];
            long[] values = new long[TASKS];
            for (int i = 0; i < TASKS; i++) {
                int k = i == 0 ? 0 : r.nextInt(3);
                Set<Integer> d = new java.util.TreeSet<>();
                for (int j = 0; j < k; j++) {
                    d.add(Math.max(0, i - 1 - r.nextInt(Math.min(i, 40))));
                }
                deps[i] = d.stream().mapToInt(Integer::intValue).toArray();
                long v = i;
                for (int p : deps[i]) {
                    v += values[p];
                }
                values[i] = v % 1_000_003;
            }
            return new Graph(deps, values);
        }
    }

    private TaskSpec task(Graph g, int i, Path out, Path runs) {
        StringBuilder sum = new StringBuilder(Integer.toString(i));
        List<String> after = new ArrayList<>();
        for (int p : g.deps()[i]) {
            sum.append(" + $(cat ").append(out.resolve("t" + p)).append(")");
            after.add("t" + p);
        }
        String script = "sleep 0.05; v=$(( (" + sum + ") % 1000003 )); echo $v > " + out.resolve("t" + i)
                + "; pwd >> " + runs.resolve("t" + i);
        return TaskSpec.builder("sh", "-c", script).name("t" + i).after(after.toArray(String[]::new)).retries(5)
                .build();
    }

    private void loseOneMidWorkflow(Loss loss) throws Exception {
        int[] ports = {ClusterProcesses.freePort(), ClusterProcesses.freePort(), ClusterProcesses.freePort()};
        Path out = Files.createDirectories(dir.resolve("out"));
        Path runs = Files.createDirectories(dir.resolve("runs"));
        Path journal = dir.resolve("journal");
        Graph g = Graph.random(loss.ordinal() + 59);
        try (ClusterProcesses procs = new ClusterProcesses(dir)) {
            List<Process> dispatchers = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                String[] extra = i == 1 ? new String[] {"--journal", journal.toString()} : new String[0];
                dispatchers.add(procs.dispatcher(ports[i], extra));
                Path work = Files.createDirectories(dir.resolve("w" + i));
                procs.executor(ports[i], "f" + i + "-exec", "--impl", "c", "--slots", "2", "--reconnect-for", "120",
                        "--workdir", work.toString());
            }
            ClientOptions options = procs.clientOptions().withFailoverAfter(FAILOVER_AFTER);
            String addresses = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1] + ",127.0.0.1:" + ports[2];
            try (DistributedClient client = DistributedClient.connect(addresses, options)) {
                await().atMost(Duration.ofSeconds(60)).until(() ->
                        JSON.readTree(client.status()).path("executors").path("slots").asInt() == 6);
                DistributedInstance in = client.createInstance("failover-" + loss);
                Set<Long> heardOnce = ConcurrentHashMap.newKeySet();
                AtomicInteger heardAgain = new AtomicInteger();
                in.onResult(r -> {
                    if (!heardOnce.add(r.taskId())) {
                        heardAgain.incrementAndGet();
                    }
                });
                long start = System.nanoTime();
                List<CompletableFuture<TaskResult>> futures = new ArrayList<>();
                for (int i = 0; i < TASKS; i++) {
                    futures.add(in.submit(task(g, i, out, runs)));
                }
                await().atMost(Duration.ofSeconds(60)).until(() -> heardOnce.size() >= TASKS / 3);
                // lost while it holds tasks (a dependency graph may leave it none for a moment)
                await().atMost(Duration.ofSeconds(60)).until(() -> in.heldBy().get("127.0.0.1:" + ports[1]) > 0);
                long lostAt = System.nanoTime();
                Process victim = dispatchers.get(1);
                switch (loss) {
                    case KILL, KILL_AND_RESTART -> ClusterProcesses.kill9(victim);
                    case STOP -> signal("STOP", victim);
                }
                if (loss == Loss.KILL_AND_RESTART) {
                    // back from its journal once its tasks have moved: it must not run them again
                    await().atMost(Duration.ofSeconds(60)).until(() -> in.resent() > 0);
                    procs.dispatcher(ports[1], "--journal", journal.toString());
                }
                CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(180, TimeUnit.SECONDS);
                double afterLoss = (System.nanoTime() - lostAt) / 1e9;
                double total = (System.nanoTime() - start) / 1e9;

                for (int i = 0; i < TASKS; i++) {
                    TaskResult r = futures.get(i).join();
                    assertThat(r.succeeded()).as("t%d: %s", i, r).isTrue();
                    assertThat(Files.readString(out.resolve("t" + i)).strip()).as("t%d's value", i)
                            .isEqualTo(Long.toString(g.values()[i]));
                }
                assertThat(heardOnce).hasSize(TASKS);
                assertThat(heardAgain.get()).as("results heard twice").isZero();
                assertThat(in.resent()).as("tasks moved off the lost dispatcher").isPositive();
                // without failover the client would wait for the lost one for reconnectFor (120 s)
                assertThat(afterLoss).as("seconds from the loss to the end").isLessThan(60);

                if (loss == Loss.KILL_AND_RESTART) {
                    // once it answers, its part re-attached (ATTACH_MOVED goes before the status request on the
                    // connection): nothing of the journal is held or queued there any more, so nothing moved can
                    // still start there
                    String victimAddress = "127.0.0.1:" + ports[1];
                    await().atMost(Duration.ofSeconds(120)).until(() -> {
                        for (var d : JSON.readTree(client.status()).path("dispatcherList")) {
                            if (d.path("address").asText().equals(victimAddress) && d.path("reachable").asBoolean()) {
                                var st = d.path("status");
                                return st.path("held").asInt(-1) == 0 && st.path("queued").asInt(-1) == 0
                                        && st.path("running").asInt(-1) == 0;
                            }
                        }
                        return false;
                    });
                }
                String victimDir = dir.resolve("w1").toString();
                int twice = 0;
                for (int i = 0; i < TASKS; i++) {
                    List<String> lines = Files.readAllLines(runs.resolve("t" + i));
                    twice += lines.size() > 1 ? 1 : 0;
                    int firstElsewhere = -1;
                    for (int k = 0; k < lines.size(); k++) {
                        if (!lines.get(k).equals(victimDir) && firstElsewhere < 0) {
                            firstElsewhere = k;
                        }
                        if (lines.get(k).equals(victimDir) && firstElsewhere >= 0) {
                            throw new AssertionError("t" + i + " moved off the lost dispatcher and ran there again: "
                                    + lines);
                        }
                    }
                    assertThat(lines.stream().filter(victimDir::equals).count()).as("t%d's runs on the victim: %s",
                            i, lines).isLessThanOrEqualTo(1);
                }
                System.out.printf("failover %s: %d tasks in %.2f s, %.2f s after the loss; %d moved, %d ran twice%n",
                        loss, TASKS, total, afterLoss, in.resent(), twice);
            } finally {
                if (loss == Loss.STOP) {
                    signal("CONT", dispatchers.get(1)); // so that it can be stopped like the others
                }
            }
        }
    }

    private static void signal(String sig, Process p) throws Exception {
        Process k = new ProcessBuilder("kill", "-" + sig, Long.toString(p.pid())).inheritIO().start();
        assertThat(k.waitFor()).isZero();
    }

    @Test
    void aKilledDispatchersTasksMoveAfterTheDetectionTime() throws Exception {
        loseOneMidWorkflow(Loss.KILL);
    }

    @Test
    void aHungDispatchersTasksMoveAfterTheDetectionTime() throws Exception {
        loseOneMidWorkflow(Loss.STOP);
    }

    @Test
    void aDispatcherRestartedFromItsJournalCancelsWhatMovedInsteadOfRunningItAgain() throws Exception {
        loseOneMidWorkflow(Loss.KILL_AND_RESTART);
    }
}
