package io.falkon.bench;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.protocol.tls.ThrowawayCertificates;
import io.falkon.protocol.tls.Tls;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Stream;

/**
 * What TLS costs (issue: publish it): no-exec throughput and one-task latency with plain TCP and
 * with TLS everywhere (client and executors to the dispatcher), in the same run, rounds
 * interleaved so that both modes see the same machine. Certificates are throwaway ones made for
 * the run.
 */
@Command(name = "tls", mixinStandardHelpOptions = true,
        description = "No-exec throughput and latency, plain TCP vs TLS, in the same run.")
final class TlsBenchmark implements Callable<Integer> {

    @Option(names = "--tasks", description = "no-exec tasks per throughput measurement (default: ${DEFAULT-VALUE})")
    int tasks = 200_000;

    @Option(names = "--latency-tasks", description = "tasks run one at a time per latency measurement "
            + "(default: ${DEFAULT-VALUE})")
    int latencyTasks = 2_000;

    @Option(names = "--executors", description = "no-exec executors in this JVM (default: ${DEFAULT-VALUE})")
    int executors = 2;

    @Option(names = "--slots", description = "slots per executor (default: ${DEFAULT-VALUE})")
    int slots = 1000;

    @Option(names = "--bundle", description = "client bundle size (default: ${DEFAULT-VALUE})")
    int bundle = 100;

    @Option(names = "--rounds", description = "rounds per mode, interleaved; the median is reported "
            + "(default: ${DEFAULT-VALUE})")
    int rounds = 3;

    @Option(names = "--out", description = "directory for tls.csv and tls.json (default: ${DEFAULT-VALUE})")
    Path out = Path.of("bench-results");

    private record Round(double tasksPerSecond, double p50ms, double p99ms) {
    }

    @Override
    public Integer call() throws Exception {
        Path pki = Files.createTempDirectory("falkon-bench-tls");
        try {
            return run(ThrowawayCertificates.generate(pki));
        } finally {
            try (Stream<Path> files = Files.list(pki)) {
                for (Path f : files.toList()) {
                    Files.delete(f);
                }
            }
            Files.delete(pki);
        }
    }

    private int run(ThrowawayCertificates.Pem pem) throws Exception {
        ResultTable table = new ResultTable("tls: no-exec throughput and one-task latency, plain vs TLS",
                List.of("mode", "executors", "tasks", "tasksPerSecond", "latencyP50ms", "latencyP99ms"));
        Machine.describe(table);
        table.meta("rounds", rounds + " per mode, interleaved; medians");
        List<List<Round>> byMode = List.of(new ArrayList<>(), new ArrayList<>());
        for (int r = 0; r < rounds; r++) {
            for (int m = 0; m < 2; m++) {
                boolean tls = m == 1;
                Round round = measure(tls ? pem : null);
                System.err.printf("  round %d %s: %,.0f tasks/s, p50 %.3f ms, p99 %.3f ms%n", r + 1,
                        tls ? "tls" : "plain", round.tasksPerSecond(), round.p50ms(), round.p99ms());
                byMode.get(m).add(round);
            }
        }
        Round[] medians = new Round[2];
        for (int m = 0; m < 2; m++) {
            List<Round> rs = byMode.get(m);
            medians[m] = new Round(ThroughputBenchmark.medianOf(rs.stream().map(Round::tasksPerSecond).toList()),
                    ThroughputBenchmark.medianOf(rs.stream().map(Round::p50ms).toList()),
                    ThroughputBenchmark.medianOf(rs.stream().map(Round::p99ms).toList()));
            table.add(m == 0 ? "plain" : "tls", executors, tasks, Math.round(medians[m].tasksPerSecond()),
                    medians[m].p50ms(), medians[m].p99ms());
        }
        table.meta("tlsThroughputRatio", medians[1].tasksPerSecond() / medians[0].tasksPerSecond());
        table.print(System.out);
        table.write(out, "tls");
        System.out.println("wrote " + out.resolve("tls.csv") + " and tls.json");
        return 0;
    }

    /** One round: a fresh cluster (TLS on every connection when {@code pem} is given), then both measurements. */
    private Round measure(ThrowawayCertificates.Pem pem) throws Exception {
        DispatcherConfig config = DispatcherConfig.local();
        Tls client = null;
        if (pem != null) {
            config = config.withTls(Tls.server(pem.chain(), pem.key()));
            client = Tls.client(pem.ca());
        }
        Tls executorTls = client;
        try (LocalCluster cluster = new LocalCluster(config, executors, slots, true, false, 0,
                c -> c.withTls(executorTls))) {
            double tasksPerSecond;
            try (FalkonClient c = cluster.client(ClientOptions.defaults().withBundleSize(bundle)
                    .withMaxInFlight(Math.max(bundle, 100_000)).withTls(client))) {
                ThroughputBenchmark.runOnce(c, Math.max(bundle, tasks / 5), null); // warm-up
                long t0 = System.nanoTime();
                ThroughputBenchmark.runOnce(c, tasks, null);
                tasksPerSecond = tasks / ((System.nanoTime() - t0) / 1e9);
            }
            try (FalkonClient c = cluster.client(ClientOptions.defaults().withBundleSize(1).withTls(client))) {
                Histogram h = LatencyBenchmark.sequential(c, latencyTasks);
                return new Round(tasksPerSecond, Percentiles.ms(h, 50), Percentiles.ms(h, 99));
            }
        }
    }
}
