package io.falkon.bench;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.dispatcher.journal.FsyncPolicy;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Stream;

/**
 * What durability costs: the no-exec throughput workload with the journal off and with each fsync
 * policy (the client's instances have a lease, so every task is journaled: accepted, completed,
 * acknowledged).
 */
@Command(name = "journal", mixinStandardHelpOptions = true,
        description = "Throughput with the journal off, and with fsync NEVER, BATCH and ALWAYS.")
final class JournalBenchmark implements Callable<Integer> {

    @Option(names = "--tasks", description = "tasks per measurement (default: ${DEFAULT-VALUE})")
    int tasks = 100_000;

    @Option(names = "--bundle", description = "client bundle size (default: ${DEFAULT-VALUE})")
    int bundle = 100;

    @Option(names = "--executors", description = "no-exec executors (default: ${DEFAULT-VALUE})")
    int executors = 2;

    @Option(names = "--dir", description = "where to put the journal (default: a temporary directory)")
    Path dir;

    @Option(names = "--out", description = "directory for CSV and JSON (default: ${DEFAULT-VALUE})")
    Path out = Path.of("bench-results");

    @Override
    public Integer call() throws Exception {
        ResultTable table = new ResultTable("journal: no-exec throughput by durability",
                List.of("journal", "tasks", "bundle", "seconds", "tasksPerSecond", "journalBytesPerTask"));
        Machine.describe(table);
        Path base = dir != null ? dir : Files.createTempDirectory("falkon-journal-bench-");
        table.meta("journalDirectory", base.toString());
        measure(null, "warm-up", null, null); // JIT: the first configuration would otherwise look slow
        measure(table, "off", null, null);
        for (FsyncPolicy p : FsyncPolicy.values()) {
            measure(table, p.name().toLowerCase(), base.resolve(p.name()), p);
        }
        table.print(System.out);
        table.write(out, "journal");
        if (dir == null) {
            deleteTree(base);
        }
        return 0;
    }

    private void measure(ResultTable table, String name, Path journalDir, FsyncPolicy policy) throws Exception {
        DispatcherConfig cfg = DispatcherConfig.local();
        if (journalDir != null) {
            cfg = cfg.withJournal(journalDir, policy);
        }
        ClientOptions opts = ClientOptions.defaults().withBundleSize(bundle).withMaxInFlight(Math.max(bundle, 100_000));
        try (LocalCluster cluster = new LocalCluster(cfg, executors, 1000, true, false);
             FalkonClient client = cluster.client(opts)) {
            ThroughputBenchmark.runOnce(client, Math.max(bundle, tasks / 5), null);
            long before = journalDir == null ? 0 : Files.size(journalDir.resolve("falkon.journal"));
            long t0 = System.nanoTime();
            ThroughputBenchmark.runOnce(client, tasks, null);
            double seconds = (System.nanoTime() - t0) / 1e9;
            long after = journalDir == null ? 0 : Files.size(journalDir.resolve("falkon.journal"));
            if (table == null) {
                return;
            }
            table.add(name, tasks, bundle, seconds, tasks / seconds, (double) Math.max(0, after - before) / tasks);
            System.err.printf("  journal %s: %,.0f tasks/s%n", name, tasks / seconds);
        }
    }

    private static void deleteTree(Path p) throws IOException {
        try (Stream<Path> files = Files.walk(p)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }
}
