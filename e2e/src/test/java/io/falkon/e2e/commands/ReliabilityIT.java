package io.falkon.e2e.commands;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import io.falkon.protocol.TaskSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Reliability with real processes over 127.0.0.1: executors and dispatchers killed with SIGKILL,
 * a damaged journal, a broken node. Every task must end with exactly one successful result.
 */
class ReliabilityIT {
    static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;
    @RegisterExtension
    final LogsOnFailure logs = new LogsOnFailure(() -> dir);

    /** Submits n tasks and counts, per task, how many results reach the client. */
    static final class Run {
        final ConcurrentHashMap<Long, AtomicInteger> results = new ConcurrentHashMap<>();
        final List<CompletableFuture<TaskResult>> futures;

        Run(Instance in, int n, TaskSpec spec) {
            in.onResult(r -> results.computeIfAbsent(r.taskId(), k -> new AtomicInteger()).incrementAndGet());
            List<TaskSpec> specs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                specs.add(spec);
            }
            futures = in.submit(specs);
        }

        void assertExactlyOneSuccessEach(int n) throws Exception {
            CompletableFuture.allOf(futures.toArray(CompletableFuture<?>[]::new)).get(5, TimeUnit.MINUTES);
            assertThat(futures).allSatisfy(f -> assertThat(f.join().succeeded()).as(String.valueOf(f.join())).isTrue());
            assertThat(results).hasSize(n);
            assertThat(results.values()).allSatisfy(c -> assertThat(c.get()).as("results for one task").isEqualTo(1));
        }
    }

    @Test
    void chaosKillingAnExecutorEverySecondLosesAndDuplicatesNothing() throws Exception {
        int port = ClusterProcesses.freePort();
        try (ClusterProcesses procs = new ClusterProcesses(dir)) {
            procs.dispatcher(port);
            List<Process> executors = new ArrayList<>();
            int next = 0;
            for (; next < 3; next++) {
                executors.add(chaosExecutor(procs, port, next));
            }
            try (FalkonClient client = FalkonClient.connect("127.0.0.1:" + port, procs.clientOptions());
                 Instance in = client.createInstance("chaos")) {
                Run run = new Run(in, 5000, TaskSpec.builder("sleep", "0.01").retries(20).build());
                Random rnd = new Random(7);
                int kills = 0;
                while (run.results.size() < 5000) {
                    TimeUnit.MILLISECONDS.sleep(800 + rnd.nextInt(400)); // the chaos cadence itself
                    if (run.results.size() >= 5000) {
                        break;
                    }
                    Process victim = executors.remove(rnd.nextInt(executors.size()));
                    ClusterProcesses.kill9(victim);
                    kills++;
                    executors.add(chaosExecutor(procs, port, next++));
                }
                run.assertExactlyOneSuccessEach(5000);
                assertThat(kills).as("executors killed during the run").isGreaterThanOrEqualTo(3);
                JsonNode status = JSON.readTree(client.status());
                assertThat(status.get("retried").asLong()).isPositive();
            }
        }
    }

    /**
     * The Java and the C executor by turns: the rule under test is the dispatcher's, and both kinds
     * must hold it. A JVM per replacement every second cost this test most of its CPU, and the run
     * stretched with it (more kills, more JVMs); half as many is enough to keep both kinds in play.
     */
    private static Process chaosExecutor(ClusterProcesses procs, int port, int n) throws IOException {
        return n % 2 == 0 ? procs.executor(port, "chaos-" + n, "--slots", "2")
                : procs.executor(port, "chaos-" + n, "--impl", "c", "--slots", "2");
    }

    @Test
    void aDispatcherKilledMidRunRestartsFromItsJournalAndTheClientCarriesOn() throws Exception {
        int port = ClusterProcesses.freePort();
        Path journal = dir.resolve("journal");
        try (ClusterProcesses procs = new ClusterProcesses(dir)) {
            Process dispatcher = procs.dispatcher(port, "--journal", journal.toString(), "--fsync", "ALWAYS");
            for (int i = 0; i < 2; i++) {
                procs.executor(port, "survivor-" + i, "--slots", "2", "--reconnect-for", "120");
            }
            try (FalkonClient client = FalkonClient.connect("127.0.0.1:" + port,
                    procs.clientOptions().withReconnectFor(Duration.ofSeconds(120)));
                 Instance in = client.createInstance("restart")) {
                Run run = new Run(in, 2000, TaskSpec.builder("sleep", "0.01").retries(10).build());
                await().atMost(Duration.ofMinutes(2)).until(() -> run.results.size() >= 400);
                ClusterProcesses.kill9(dispatcher);
                procs.dispatcher(port, "--journal", journal.toString(), "--fsync", "ALWAYS");
                run.assertExactlyOneSuccessEach(2000);
            }
            assertThat(procs.log("dispatcher")).contains("unfinished tasks re-queued");
        }
    }

    @Test
    void aJournaledDispatcherStoppedWithSigtermKeepsItsExecutorsForItsSuccessor() throws Exception {
        // a planned restart (an upgrade): SIGTERM, then the same command again
        int port = ClusterProcesses.freePort();
        Path journal = dir.resolve("journal");
        try (ClusterProcesses procs = new ClusterProcesses(dir)) {
            Process dispatcher = procs.dispatcher(port, "--journal", journal.toString());
            List<Process> executors = List.of(procs.executor(port, "kept-java", "--slots", "1"),
                    procs.executor(port, "kept-c", "--impl", "c", "--slots", "1"));
            try (FalkonClient client = FalkonClient.connect("127.0.0.1:" + port, procs.clientOptions())) {
                await().atMost(Duration.ofMinutes(1)).until(() ->
                        JSON.readTree(client.status()).at("/executors/registered").asInt() == 2);
            }
            dispatcher.destroy(); // SIGTERM
            assertThat(dispatcher.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(procs.log("dispatcher")).contains("started again with --journal");
            procs.dispatcher(port, "--journal", journal.toString());
            try (FalkonClient client = FalkonClient.connect("127.0.0.1:" + port, procs.clientOptions());
                 Instance in = client.createInstance("after-restart")) {
                await().atMost(Duration.ofMinutes(1)).until(() ->
                        JSON.readTree(client.status()).at("/executors/registered").asInt() == 2);
                assertThat(executors).allSatisfy(p -> assertThat(p.isAlive()).isTrue());
                assertThat(in.submit(TaskSpec.of("/bin/echo", "rejoined")).get(60, TimeUnit.SECONDS).stdout())
                        .isEqualTo("rejoined\n");
            }
        }
    }

    @Test
    void submitExitsNonZeroNamingTheTasksLostWhenADispatcherRestartsWithoutItsJournal() throws Exception {
        int port = ClusterProcesses.freePort();
        Path tasks = dir.resolve("tasks.txt");
        Files.writeString(tasks, "sleep 0.05\n".repeat(400));
        try (ClusterProcesses procs = new ClusterProcesses(dir)) {
            Process dispatcher = procs.dispatcher(port);
            procs.executor(port, "e", "--slots", "4", "--reconnect-for", "120");
            Process submit = procs.command("submit", "submit", "--dispatcher", "127.0.0.1:" + port,
                    tasks.toString());
            try (FalkonClient watcher = FalkonClient.connect("127.0.0.1:" + port,
                    procs.clientOptions().withReconnectFor(Duration.ZERO))) {
                await().atMost(Duration.ofMinutes(1))
                        .until(() -> JSON.readTree(watcher.status()).path("completed").asLong() >= 40);
            }
            ClusterProcesses.kill9(dispatcher);
            procs.dispatcher(port); // no journal: the instance is gone
            assertThat(submit.waitFor(3, TimeUnit.MINUTES)).isTrue();
            String out = procs.log("submit");
            assertThat(submit.exitValue()).as(out).isEqualTo(1);
            assertThat(out).containsPattern("400 tasks: \\d+ succeeded, 0 failed, \\d+ LOST")
                    .contains("got no result").containsPattern("line \\d+: lost");
        }
    }

    @Test
    void aCorruptJournalTailIsTruncatedAndTheDispatcherStartsWithWhatCameBefore() throws Exception {
        int port = ClusterProcesses.freePort();
        Path journal = dir.resolve("journal");
        try (ClusterProcesses procs = new ClusterProcesses(dir)) {
            Process dispatcher = procs.dispatcher(port, "--journal", journal.toString(), "--fsync", "ALWAYS");
            String key;
            try (FalkonClient client = FalkonClient.connect("127.0.0.1:" + port,
                    procs.clientOptions().withReconnectFor(Duration.ZERO))) {
                Instance in = client.createInstance("kept");
                key = in.key();
                in.submit(List.of(TaskSpec.of("true"), TaskSpec.of("true"), TaskSpec.of("true")));
                await().atMost(Duration.ofSeconds(30)).until(() -> in.status().contains("\"queued\":3"));
                ClusterProcesses.kill9(dispatcher); // no executor: all three are still queued
            }
            Path file = journal.resolve("falkon.journal");
            Files.write(file, new byte[]{0, 0, 0, 40, 1, 2, 3, 4, 9, 9, 9}, StandardOpenOption.APPEND);
            procs.dispatcher(port, "--journal", journal.toString());
            assertThat(procs.log("dispatcher")).contains("truncating");
            try (FalkonClient client = FalkonClient.connect("127.0.0.1:" + port, procs.clientOptions())) {
                List<String> outputs = new CopyOnWriteArrayList<>();
                Instance in = client.attach(key, r -> outputs.add(r.status().name()));
                procs.executor(port, "late", "--slots", "2");
                await().atMost(Duration.ofMinutes(1)).until(() -> outputs.size() == 3);
                assertThat(outputs).containsOnly("EXITED");
                in.close();
            }
        }
    }

    @Test
    void aFloodIntoASmallHeapIsSlowedNotCrashedInto() throws Exception {
        int port = ClusterProcesses.freePort();
        int n = 300_000;
        try (ClusterProcesses procs = new ClusterProcesses(dir)) {
            // 64 MiB of heap, a 32 MiB budget: 300,000 queued tasks (~50 MB) and as many results
            // awaiting acknowledgement (~48 MB) would each exceed it
            Process dispatcher = procs.dispatcher(List.of("-Xmx64m", "-XX:+UseParallelGC",
                    "-XX:+ExitOnOutOfMemoryError"), port);
            ClientOptions flood = procs.clientOptions().withBundleSize(1000).withMaxInFlight(n);
            try (FalkonClient client = FalkonClient.connect("127.0.0.1:" + port, flood);
                 Instance in = client.createInstance("flood")) {
                Run run = new Run(in, n, TaskSpec.of("true"));
                await().atMost(Duration.ofMinutes(1))
                        .until(() -> JSON.readTree(client.status()).at("/memory/refusingBundles").asBoolean());
                procs.executor(port, "sink", "--no-exec", "--slots", "1000");
                run.assertExactlyOneSuccessEach(n);
                assertThat(dispatcher.isAlive()).isTrue();
                JsonNode memory = JSON.readTree(client.status()).get("memory");
                assertThat(memory.get("refusedBundles").asLong()).isPositive();
                assertThat(procs.log("dispatcher")).contains("refused with BUSY").doesNotContain("OutOfMemoryError");
            }
        }
    }

    @Test
    void anExecutorWhoseEveryTaskFailsIsSuspendedAndTheWorkloadCompletesOnTheOthers() throws Exception {
        int port = ClusterProcesses.freePort();
        try (ClusterProcesses procs = new ClusterProcesses(dir)) {
            procs.dispatcher(port, "--suspend-after", "3", "--suspend-window", "60", "--suspend-for", "300");
            procs.executor(port, "good-0", "--slots", "2");
            procs.executor(port, "good-1", "--slots", "2");
            // a node whose scratch mount is missing: nothing can start there
            procs.executor(port, "broken", "--slots", "2", "--workdir", dir.resolve("missing-mount").toString());
            try (FalkonClient client = FalkonClient.connect("127.0.0.1:" + port, procs.clientOptions())) {
                await().atMost(Duration.ofMinutes(1))
                        .until(() -> JSON.readTree(client.status()).at("/executors/registered").asInt() == 3);
                try (Instance in = client.createInstance("suspend")) {
                    Run run = new Run(in, 300, TaskSpec.shell("echo ok"));
                    run.assertExactlyOneSuccessEach(300);
                    assertThat(run.futures).allSatisfy(f -> assertThat(f.join().executorId()).startsWith("good-"));
                }
                JsonNode status = JSON.readTree(client.status());
                JsonNode broken = null;
                for (JsonNode e : status.get("executorList")) {
                    if (e.get("id").asText().equals("broken")) {
                        broken = e;
                    }
                }
                assertThat(broken).isNotNull();
                assertThat(broken.get("state").asText()).isEqualTo("suspended");
                assertThat(broken.get("suspensions").asInt()).isEqualTo(1);
                assertThat(procs.log("dispatcher")).contains("executor broken suspended for 300 s");
            }
        }
    }
}
