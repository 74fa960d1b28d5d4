package io.falkon.e2e.commands;

import io.falkon.client.ClientOptions;
import io.falkon.client.DistributedClient;
import io.falkon.client.DistributedInstance;
import io.falkon.client.TaskResult;
import io.falkon.protocol.TaskSpec;
import io.falkon.provisioner.Lrms;
import io.falkon.provisioner.lrm.Shell;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Several dispatchers, each with its own executors, behind one {@link DistributedClient} (the 3-tier
 * layout of Falkon on Blue Gene/P): real dispatcher and C executor processes on this machine.
 */
class DistributedDispatchersIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;
    @RegisterExtension
    final LogsOnFailure logs = new LogsOnFailure(() -> dir);

    /** Submits {@code n} tasks; counts the results the listener sees per task, and which executor ran each. */
    private static final class Run {
        final List<CompletableFuture<TaskResult>> futures = new ArrayList<>();
        final Map<String, List<TaskResult>> byExecutor = new ConcurrentHashMap<>();
        final AtomicInteger heard = new AtomicInteger();

        Run(DistributedInstance in, int n, TaskSpec spec) {
            in.onResult(r -> {
                heard.incrementAndGet();
                byExecutor.computeIfAbsent(r.executorId(), k -> new ArrayList<>()).add(r);
            });
            for (int i = 0; i < n; i++) {
                futures.add(in.submit(spec));
            }
        }

        void assertEveryTaskSucceededOnce(int n) throws Exception {
            CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(180, TimeUnit.SECONDS);
            assertThat(futures).allSatisfy(f -> assertThat(f.join().succeeded()).as(String.valueOf(f.join())).isTrue());
            assertThat(heard.get()).as("results delivered").isEqualTo(n);
        }

        long completedBy(String executorPrefix) {
            return byExecutor.entrySet().stream().filter(e -> e.getKey().startsWith(executorPrefix))
                    .mapToLong(e -> e.getValue().size()).sum();
        }

        long lastCompletionMicros(String executorPrefix) {
            return byExecutor.entrySet().stream().filter(e -> e.getKey().startsWith(executorPrefix))
                    .flatMap(e -> e.getValue().stream()).mapToLong(TaskResult::completedMicros).max().orElse(0);
        }
    }

    private static String addresses(int... ports) {
        List<String> a = new ArrayList<>();
        for (int p : ports) {
            a.add("127.0.0.1:" + p);
        }
        return String.join(",", a);
    }

    @Test
    void skewedCapacityKeepsEveryDispatcherBusyToTheEnd() throws Exception {
        int[] ports = {ClusterProcesses.freePort(), ClusterProcesses.freePort(), ClusterProcesses.freePort()};
        int[] slots = {1, 2, 8};
        try (ClusterProcesses procs = new ClusterProcesses(dir)) {
            for (int i = 0; i < 3; i++) {
                procs.dispatcher(ports[i]);
                procs.executor(ports[i], "d" + i + "-exec", "--impl", "c", "--slots", Integer.toString(slots[i]));
            }
            try (DistributedClient client = DistributedClient.connect(addresses(ports), procs.clientOptions())) {
                await().atMost(Duration.ofSeconds(60)).until(() ->
                        JSON.readTree(client.status()).path("executors").path("slots").asInt() == 11);
                DistributedInstance in = client.createInstance("skewed");
                int n = 330; // 3 s of work for 11 slots at 0.1 s a task
                Run run = new Run(in, n, TaskSpec.of("sleep", "0.1"));
                run.assertEveryTaskSucceededOnce(n);

                long end = Math.max(run.lastCompletionMicros("d0"), Math.max(run.lastCompletionMicros("d1"),
                        run.lastCompletionMicros("d2")));
                for (int i = 0; i < 3; i++) {
                    assertThat(end - run.lastCompletionMicros("d" + i)).as("dispatcher %d (%d slots) idle before the end",
                            i, slots[i]).isLessThan(600_000);
                }
                // the work follows the capacity: the 8-slot dispatcher ran most, the 1-slot one least
                assertThat(run.completedBy("d2")).isGreaterThan(3 * run.completedBy("d0"));
                assertThat(run.completedBy("d0")).isPositive();
                assertThat(run.completedBy("d0") + run.completedBy("d1") + run.completedBy("d2")).isEqualTo(n);
            }
        }
    }

    private void killOneMidRun(boolean journal) throws Exception {
        int[] ports = {ClusterProcesses.freePort(), ClusterProcesses.freePort(), ClusterProcesses.freePort()};
        Path journalDir = dir.resolve("journal");
        try (ClusterProcesses procs = new ClusterProcesses(dir)) {
            List<Process> dispatchers = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                String[] extra = i == 1 && journal
                        ? new String[] {"--journal", journalDir.toString(), "--fsync", "ALWAYS"} : new String[0];
                dispatchers.add(procs.dispatcher(ports[i], extra));
                procs.executor(ports[i], "d" + i + "-exec", "--impl", "c", "--slots", "2",
                        "--reconnect-for", "120");
            }
            // without a journal nothing comes back: the client gives the dead dispatcher 3 s, then moves its tasks;
            // with one, failover is off: this is the path where the instance simply re-attaches (FailoverIT has both)
            ClientOptions options = procs.clientOptions().withReconnectFor(Duration.ofSeconds(journal ? 60 : 3))
                    .withFailoverAfter(journal ? Duration.ZERO : ClientOptions.DEFAULT_FAILOVER_AFTER);
            try (DistributedClient client = DistributedClient.connect(addresses(ports), options)) {
                await().atMost(Duration.ofSeconds(60)).until(() ->
                        JSON.readTree(client.status()).path("executors").path("slots").asInt() == 6);
                DistributedInstance in = client.createInstance(journal ? "killed-journal" : "killed");
                int n = 180;
                Run run = new Run(in, n, TaskSpec.of("sleep", "0.1"));
                await().atMost(Duration.ofSeconds(60)).until(() -> run.heard.get() >= 30);
                int held = in.heldBy().get("127.0.0.1:" + ports[1]);
                assertThat(held).as("the victim holds tasks").isPositive();
                ClusterProcesses.kill9(dispatchers.get(1));
                if (journal) {
                    procs.dispatcher(ports[1], "--journal", journalDir.toString(), "--fsync", "ALWAYS");
                }
                run.assertEveryTaskSucceededOnce(n);
                if (journal) {
                    // it came back with what it held: the instance re-attached, nothing had to move
                    assertThat(in.resent()).isZero();
                } else {
                    // what it held ran elsewhere (perhaps more: tasks it had queued when it died)
                    assertThat(in.resent()).isGreaterThanOrEqualTo(held);
                }
            }
        }
    }

    @Test
    void aWorkflowOverSeveralDispatchersRunsInDependencyOrderWithOneKilled() throws Exception {
        // the client resolves dependencies (docs/scaling.md): a task goes to a dispatcher once what it
        // needs has succeeded, wherever that ran; a dispatcher lost on the way loses nothing
        int[] ports = {ClusterProcesses.freePort(), ClusterProcesses.freePort(), ClusterProcesses.freePort()};
        try (ClusterProcesses procs = new ClusterProcesses(dir)) {
            List<Process> dispatchers = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                dispatchers.add(procs.dispatcher(ports[i]));
                procs.executor(ports[i], "w" + i + "-exec", "--impl", "c", "--slots", "2", "--reconnect-for", "120");
            }
            ClientOptions options = procs.clientOptions().withReconnectFor(Duration.ofSeconds(3));
            try (DistributedClient client = DistributedClient.connect(addresses(ports), options)) {
                await().atMost(Duration.ofSeconds(60)).until(() ->
                        JSON.readTree(client.status()).path("executors").path("slots").asInt() == 6);
                DistributedInstance in = client.createInstance("workflow");
                int chains = 20;
                int stages = 4;
                Map<String, CompletableFuture<TaskResult>> byName = new HashMap<>();
                for (int s = 0; s < stages; s++) {
                    for (int c = 0; c < chains; c++) {
                        TaskSpec.Builder b = TaskSpec.builder("sleep", "0.1").name("c" + c + "-s" + s).retries(5);
                        if (s > 0) {
                            b.after("c" + c + "-s" + (s - 1));
                        }
                        byName.put("c" + c + "-s" + s, in.submit(b.build()));
                    }
                }
                await().atMost(Duration.ofSeconds(60)).until(() -> byName.values().stream()
                        .filter(CompletableFuture::isDone).count() >= chains);
                ClusterProcesses.kill9(dispatchers.get(1));
                CompletableFuture.allOf(byName.values().toArray(CompletableFuture[]::new)).get(180, TimeUnit.SECONDS);
                for (int c = 0; c < chains; c++) {
                    for (int s = 0; s < stages; s++) {
                        TaskResult r = byName.get("c" + c + "-s" + s).join();
                        assertThat(r.succeeded()).as("c%d-s%d: %s", c, s, r).isTrue();
                        if (s > 0) {
                            TaskResult before = byName.get("c" + c + "-s" + (s - 1)).join();
                            assertThat(r.execution().startedMicros()).as("c%d-s%d starts after its predecessor", c, s)
                                    .isGreaterThanOrEqualTo(before.execution().finishedMicros());
                        }
                    }
                }
            }
        }
    }

    @Test
    void aDispatcherKilledMidRunWithoutAJournalHasItsTasksRunElsewhere() throws Exception {
        killOneMidRun(false);
    }

    @Test
    void aDispatcherKilledMidRunAndRestartedFromItsJournalFinishesItsTasks() throws Exception {
        killOneMidRun(true);
    }

    @Test
    void aDispatcherAddedMidRunToTheWatchedFileIsUsed() throws Exception {
        int[] ports = {ClusterProcesses.freePort(), ClusterProcesses.freePort()};
        Path list = dir.resolve("dispatchers.txt");
        Files.writeString(list, "# the dispatchers of this run\n127.0.0.1:" + ports[0] + "\n");
        try (ClusterProcesses procs = new ClusterProcesses(dir)) {
            procs.dispatcher(ports[0]);
            procs.executor(ports[0], "first-exec", "--impl", "c", "--slots", "1");
            try (DistributedClient client = DistributedClient.connect("127.0.0.1:" + ports[0], procs.clientOptions())) {
                client.watch(list);
                await().atMost(Duration.ofSeconds(60)).until(() ->
                        JSON.readTree(client.status()).path("executors").path("slots").asInt() == 1);
                DistributedInstance in = client.createInstance("growing");
                int n = 100;
                Run run = new Run(in, n, TaskSpec.of("sleep", "0.1"));
                await().atMost(Duration.ofSeconds(60)).until(() -> run.heard.get() >= 5);
                procs.dispatcher(ports[1]);
                procs.executor(ports[1], "second-exec", "--impl", "c", "--slots", "4");
                Files.writeString(list, "127.0.0.1:" + ports[0] + "\n127.0.0.1:" + ports[1] + "\n");
                run.assertEveryTaskSucceededOnce(n);
                assertThat(run.completedBy("second")).as("tasks run by the dispatcher that joined").isGreaterThan(n / 3);

                JsonNode status = JSON.readTree(client.status());
                assertThat(status.get("dispatchers").asInt()).isEqualTo(2);
                Map<String, Long> completed = new HashMap<>();
                for (JsonNode d : status.get("dispatcherList")) {
                    completed.put(d.get("address").asText(), d.path("status").path("completed").asLong());
                }
                assertThat(completed.values().stream().mapToLong(Long::longValue).sum())
                        .isEqualTo(status.get("completed").asLong()).isEqualTo(n);
            }
        }
    }

    @Test
    void theCommandLineSubmitsToSeveralDispatchersAndSumsTheirStatus() throws Exception {
        int[] ports = {ClusterProcesses.freePort(), ClusterProcesses.freePort()};
        Path tasks = dir.resolve("tasks.txt");
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 60; i++) {
            lines.append("echo line-").append(i).append('\n');
        }
        Files.writeString(tasks, lines);
        try (ClusterProcesses procs = new ClusterProcesses(dir)) {
            for (int i = 0; i < 2; i++) {
                procs.dispatcher(ports[i]);
                procs.executor(ports[i], "cli" + i + "-exec", "--impl", "c", "--slots", "2");
            }
            Process submit = procs.command("submit", "submit", "--dispatcher", addresses(ports), "--json",
                    tasks.toString());
            assertThat(submit.waitFor(120, TimeUnit.SECONDS)).isTrue();
            String out = procs.log("submit");
            assertThat(submit.exitValue()).as(out).isZero();
            assertThat(out).contains("\"tasks\":60", "\"succeeded\":60");
            Process status = procs.command("status", "status", "--dispatcher", addresses(ports));
            assertThat(status.waitFor(60, TimeUnit.SECONDS)).isTrue();
            String shown = procs.log("status");
            assertThat(shown).contains("2 dispatchers:", "60 completed", "127.0.0.1:" + ports[0], "127.0.0.1:" + ports[1]);
        }
    }

    @Test
    void theProvisionerRunsADispatcherPerAllocationAndClientsFollowItsDispatchersFile() throws Exception {
        // two allocations of two nodes on the local scheduler: in each, one dispatcher and one C executor
        tieredRun(2, "--provisioner", "local", "--min-nodes", "4", "--max-nodes", "4", "--nodes-per-allocation", "2");
    }

    @Test
    void theTieredLayoutUnderTheRealSlurm() throws Exception {
        Lrms.requireSlurm();
        // one allocation of both of its nodes: the dispatcher on one, the executor on the other
        tieredRun(1, "--provisioner", "slurm", "--min-nodes", "2", "--max-nodes", "2", "--nodes-per-allocation", "2");
        // the allocation is released: a job whose steps ended shows COMPLETING for a moment, then goes
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200))
                .until(() -> new Shell().check(List.of("squeue", "-h", "-o", "%i %j %T")).isBlank());
    }

    @Test
    void theTieredLayoutUnderTheRealSge() throws Exception {
        Lrms.requireSge();
        // one allocation of two array tasks on the one execution host: a dispatcher and an executor
        tieredRun(1, "--provisioner", "sge", "--min-nodes", "2", "--max-nodes", "2", "--nodes-per-allocation", "2");
        await().atMost(Duration.ofSeconds(60))
                .until(() -> new Shell().check(List.of("qstat", "-u", "*")).isBlank()); // qdel takes a moment
    }

    /**
     * {@code falkon provision --layout tiered} with these scheduler options, each allocation expected
     * to bring one dispatcher with one executor of 2 slots; a file of 80 short tasks submitted to
     * them, their status summed, then the provisioner stopped as with Ctrl-C.
     */
    private void tieredRun(int dispatchers, String... lrm) throws Exception {
        Path file = dir.resolve("dispatchers");
        Path tasks = dir.resolve("sleeps.txt");
        Files.writeString(tasks, "sleep 0.05\n".repeat(80));
        try (ClusterProcesses procs = new ClusterProcesses(dir)) {
            List<String> args = new ArrayList<>(List.of("provision", "--layout", "tiered", "--slots", "2",
                    "--executor", "c", "--poll", "200", "--dispatchers-file", file.toString()));
            args.addAll(List.of(lrm));
            Process provision = procs.command("provision", args.toArray(String[]::new));
            await().atMost(Duration.ofSeconds(180)).until(() -> Files.exists(file) && listed(file).size() == dispatchers);
            List<ProcessHandle> nodes = provision.toHandle().descendants().toList();

            Process submit = procs.command("submit", "submit", "--dispatchers-file", file.toString(), "--json",
                    tasks.toString());
            assertThat(submit.waitFor(120, TimeUnit.SECONDS)).isTrue();
            assertThat(submit.exitValue()).as(procs.log("submit")).isZero();
            assertThat(procs.log("submit")).contains("\"tasks\":80", "\"succeeded\":80");

            Process status = procs.command("status", "status", "--dispatchers-file", file.toString(), "--json");
            assertThat(status.waitFor(60, TimeUnit.SECONDS)).isTrue();
            JsonNode st = JSON.readTree(procs.log("status"));
            assertThat(st.path("dispatchers").asInt()).isEqualTo(dispatchers);
            assertThat(st.path("completed").asLong()).isEqualTo(80);
            for (JsonNode d : st.path("dispatcherList")) {
                JsonNode one = d.path("status");
                assertThat(one.path("completed").asLong()).as("every dispatcher ran tasks: %s", d).isPositive();
                assertThat(one.path("executorList")).as("its own allocation's executor, and only it").hasSize(1);
            }

            provision.destroy(); // SIGTERM, as Ctrl-C: cancels the allocations
            assertThat(provision.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(listed(file)).as("clients are told the dispatchers are gone").isEmpty();
            await().atMost(Duration.ofSeconds(60)).until(() -> nodes.stream().noneMatch(ProcessHandle::isAlive));
            try (var left = Files.list(Cli.home(dir).resolve("jobs"))) {
                // withdrawn, by each dispatcher as it stopped or (SIGKILLed by the scheduler) by the provisioner
                assertThat(left.map(f -> f.getFileName().toString()).filter(f -> f.endsWith(".dispatcher")).toList())
                        .as("published addresses left behind").isEmpty();
            }
        }
    }

    private static List<String> listed(Path file) throws IOException {
        return Files.readAllLines(file).stream().filter(l -> !l.isBlank()).toList();
    }
}
