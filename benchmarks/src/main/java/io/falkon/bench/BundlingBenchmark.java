package io.falkon.bench;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.dispatcher.ws.WsTransport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * Client-to-dispatcher bundling (Falkon SC07 section 4.3, Fig. 5: ~20 tasks/s unbundled to a peak
 * of ~1,500 tasks/s at ~300 tasks per bundle over GT4 WS, falling beyond). The same sweep of bundle
 * sizes over both of our client transports, TCP and SOAP, with no-exec executors emulated in this
 * JVM so that what varies is the submission path: tasks/s end to end and the wall-clock cost per
 * task.
 */
@Command(name = "bundling", mixinStandardHelpOptions = true,
        description = "Tasks/s and cost per task vs client bundle size (1 ... 10,000), over TCP and SOAP.")
final class BundlingBenchmark implements Callable<Integer> {

    @Option(names = "--bundles", split = ",", description = "bundle sizes "
            + "(default: 1,2,5,10,20,50,100,200,300,500,1000,2000,5000,10000)")
    List<Integer> bundles = List.of(1, 2, 5, 10, 20, 50, 100, 200, 300, 500, 1000, 2000, 5000, 10000);

    @Option(names = "--transports", split = ",", description = "tcp and/or ws (default: tcp,ws)")
    List<String> transports = List.of("tcp", "ws");

    @Option(names = "--seconds", description = "aim for about this long per point: the task count is this many "
            + "seconds at the previous point's rate (default: ${DEFAULT-VALUE})")
    double seconds = 2;

    @Option(names = "--min-tasks", description = "at least this many tasks per point (default: ${DEFAULT-VALUE})")
    int minTasks = 2_000;

    @Option(names = "--max-tasks", description = "at most this many tasks per point (default: ${DEFAULT-VALUE})")
    int maxTasks = 500_000;

    @Option(names = "--rounds", description = "rounds per point; the median is reported (default: ${DEFAULT-VALUE})")
    int rounds = 3;

    @Option(names = "--out", description = "directory for CSV and JSON (default: ${DEFAULT-VALUE})")
    Path out = Path.of("bench-results");

    @Override
    public Integer call() throws Exception {
        ResultTable table = new ResultTable("bundling: tasks/s vs client bundle size, no-exec executors (2 x 1000 slots)",
                List.of("transport", "bundle", "tasks", "seconds", "tasksPerSecond", "msPerTask",
                        "submitCallsPerSecond"));
        Machine.describe(table);
        table.meta("rounds", rounds);
        try (LocalCluster cluster = new LocalCluster(DispatcherConfig.local().withWs(0,
                WsTransport.Settings.defaults().withMaxBundle(Math.max(10_000, maxBundle()))), 2, 1000, true,
                (io.falkon.executor.LocalExecutors.Impl) null, 0)) {
            for (String transport : transports) {
                String address = switch (transport) {
                    case "tcp" -> cluster.address();
                    case "ws" -> cluster.dispatcher().wsUrl();
                    default -> throw new IllegalArgumentException("unknown transport '" + transport + "' (tcp or ws)");
                };
                double rate = minTasks / seconds; // first guess, corrected by every measurement
                for (int bundle : bundles) {
                    int n = (int) Math.min(maxTasks, Math.max(Math.max(minTasks, bundle), rate * seconds));
                    ClientOptions opts = ClientOptions.defaults().withBundleSize(bundle)
                            .withMaxInFlight(Math.max(4 * bundle, 20_000));
                    List<ThroughputBenchmark.Measurement> ms = new ArrayList<>();
                    try (FalkonClient client = FalkonClient.connect(address, opts)) {
                        ThroughputBenchmark.runOnce(client, Math.max(bundle, n / 5), null); // warm-up
                        for (int round = 0; round < rounds; round++) {
                            long t0 = System.nanoTime();
                            ThroughputBenchmark.runOnce(client, n, null);
                            ms.add(new ThroughputBenchmark.Measurement(n, (System.nanoTime() - t0) / 1e9, 0, 0));
                        }
                    }
                    ThroughputBenchmark.Measurement m = ThroughputBenchmark.median(ms);
                    rate = m.tasksPerSecond();
                    table.add(transport, bundle, n, m.seconds(), rate, 1000 / rate,
                            Math.ceil((double) n / bundle) / m.seconds());
                    System.err.printf("  %s bundle %,d: %,.0f tasks/s (%,d tasks)%n", transport, bundle, rate, n);
                }
            }
        }
        table.print(System.out);
        table.write(out, "bundling");
        System.out.println("wrote " + out.resolve("bundling.csv") + " and bundling.json");
        return 0;
    }

    private int maxBundle() {
        return bundles.stream().mapToInt(Integer::intValue).max().orElse(1);
    }
}
