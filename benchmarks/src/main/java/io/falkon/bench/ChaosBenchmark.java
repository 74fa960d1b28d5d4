package io.falkon.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import io.falkon.executor.LocalExecutors;
import io.falkon.protocol.TaskSpec;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Rounds of the chaos workload: a dispatcher process and executor processes; while one client runs
 * N tasks, an executor is killed with SIGKILL at a fixed cadence and a new one started. Counts, over
 * all rounds, tasks lost (no successful result) and duplicated (more than one result).
 */
@Command(name = "chaos", mixinStandardHelpOptions = true,
        description = "Tasks lost and duplicated while executors are killed with SIGKILL.")
final class ChaosBenchmark implements Callable<Integer> {

    @Option(names = "--rounds", description = "(default: ${DEFAULT-VALUE})")
    int rounds = 20;

    @Option(names = "--tasks", description = "tasks per round (default: ${DEFAULT-VALUE})")
    int tasks = 2000;

    @Option(names = "--executors", description = "executor processes alive at once (default: ${DEFAULT-VALUE})")
    int executors = 3;

    @Option(names = "--kill-every", paramLabel = "MS", description = "(default: ${DEFAULT-VALUE})")
    long killEveryMillis = 700;

    @Option(names = "--seed", description = "(default: ${DEFAULT-VALUE})")
    long seed = 42;

    @Option(names = "--out", description = "directory for CSV and JSON (default: ${DEFAULT-VALUE})")
    Path out = Path.of("bench-results");

    @Override
    public Integer call() throws Exception {
        ResultTable table = new ResultTable("chaos: " + rounds + " rounds of " + tasks + " tasks, an executor killed "
                + "every " + killEveryMillis + " ms", List.of("round", "tasks", "kills", "retried", "lost",
                "duplicated", "seconds"));
        Machine.describe(table);
        Random rnd = new Random(seed);
        long lost = 0;
        long duplicated = 0;
        for (int round = 1; round <= rounds; round++) {
            try (DispatcherProcess d = new DispatcherProcess(List.of("-Xmx512m"))) {
                List<LocalExecutors> alive = new ArrayList<>();
                int next = 0;
                for (; next < executors; next++) {
                    alive.add(start(d, next));
                }
                ConcurrentHashMap<Long, AtomicInteger> results = new ConcurrentHashMap<>();
                long t0 = System.nanoTime();
                int kills = 0;
                long retried;
                List<CompletableFuture<TaskResult>> fs;
                try (FalkonClient client = FalkonClient.connect(d.address(), ClientOptions.defaults().withToken(d.token()));
                     Instance in = client.createInstance("chaos")) {
                    in.onResult(r -> results.computeIfAbsent(r.taskId(), k -> new AtomicInteger()).incrementAndGet());
                    List<TaskSpec> specs = new ArrayList<>();
                    for (int i = 0; i < tasks; i++) {
                        specs.add(TaskSpec.builder("sleep", "0.01").retries(50).build());
                    }
                    fs = in.submit(specs);
                    while (!in.awaitAll(Duration.ofMillis(killEveryMillis))) {
                        LocalExecutors victim = alive.remove(rnd.nextInt(alive.size()));
                        victim.processes().forEach(Process::destroyForcibly); // SIGKILL
                        kills++;
                        alive.add(start(d, next++));
                    }
                    retried = new ObjectMapper().readTree(client.status())
                            .get("retried").asLong();
                }
                long roundLost = fs.stream().filter(f -> f.isCompletedExceptionally() || !f.join().succeeded()).count();
                long roundDup = results.values().stream().filter(c -> c.get() > 1).count();
                lost += roundLost;
                duplicated += roundDup;
                double secs = (System.nanoTime() - t0) / 1e9;
                table.add(round, tasks, kills, retried, roundLost, roundDup, secs);
                System.err.printf("  round %d: %d kills, %d retried, %d lost, %d duplicated%n", round, kills, retried,
                        roundLost, roundDup);
                for (LocalExecutors e : alive) {
                    e.processes().forEach(Process::destroyForcibly);
                    e.close();
                }
            }
        }
        table.meta("totalLost", lost);
        table.meta("totalDuplicated", duplicated);
        table.print(System.out);
        System.out.printf("over %d rounds: %d tasks lost, %d duplicated%n", rounds, lost, duplicated);
        table.write(out, "chaos");
        return lost == 0 && duplicated == 0 ? 0 : 1;
    }

    private static LocalExecutors start(DispatcherProcess d, int n) throws Exception {
        return LocalExecutors.start(1, 2, false, d.port(), d.token(), "chaos-" + n, List.of());
    }
}
