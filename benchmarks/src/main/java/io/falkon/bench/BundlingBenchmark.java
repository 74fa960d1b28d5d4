package io.falkon.bench;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.executor.LocalExecutors;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.transport.ws.WsTransport;
import io.falkon.executor.ConnectOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
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

    @Option(names = "--seconds", description = "aim for about this long per round: the task count is this many "
            + "seconds at the rate of the point's warm-up (default: ${DEFAULT-VALUE})")
    double seconds = 2;

    @Option(names = "--min-tasks", description = "at least this many tasks per point (default: ${DEFAULT-VALUE})")
    int minTasks = 2_000;

    @Option(names = "--max-tasks", description = "at most this many tasks per point (default: ${DEFAULT-VALUE})")
    int maxTasks = 500_000;

    @Option(names = "--rounds", description = "rounds per point; the median is reported (default: ${DEFAULT-VALUE})")
    int rounds = 3;

    @Option(names = "--dispatcher", paramLabel = "HOST:PORT", description = "measure a running dispatcher and the "
            + "executors attached to it (a real cluster) instead of starting 2 no-exec executors here")
    String dispatcher;

    @Mixin
    ConnectOptions connect; // with --dispatcher: its token and TLS

    @Option(names = "--ws", paramLabel = "URL", description = "with --dispatcher: its Web Services address, for "
            + "the ws transport")
    String wsUrl;

    @Option(names = "--out", description = "directory for CSV and JSON (default: ${DEFAULT-VALUE})")
    Path out = Path.of("bench-results");

    @Override
    public Integer call() throws Exception {
        ResultTable table = new ResultTable("bundling: tasks/s vs client bundle size, no-exec executors (2 x 1000 slots)",
                List.of("transport", "bundle", "tasks", "seconds", "tasksPerSecond", "msPerTask",
                        "submitCallsPerSecond"));
        Machine.describe(table);
        table.meta("rounds", rounds);
        table.meta("dispatcher", dispatcher == null ? "this JVM, 2 no-exec executors x 1000 slots" : dispatcher);
        try (Target target = Target.of(dispatcher, wsUrl, connect, () -> new LocalCluster(DispatcherConfig.local().withWs(0,
                WsTransport.Settings.defaults().withMaxBundle(Math.max(10_000, maxBundle()))), 2, 1000, true,
                (LocalExecutors.Impl) null, 0))) {
            for (String transport : transports) {
                Function<ClientOptions, FalkonClient> connect = switch (transport) {
                    case "tcp" -> target::connect;
                    case "ws" -> target::connectWs;
                    default -> throw new IllegalArgumentException("unknown transport '" + transport + "' (tcp or ws)");
                };
                // warm the JVMs' compilers on this transport first, or the first point measures the JIT
                try (FalkonClient client = connect.apply(ClientOptions.defaults().withBundleSize(100))) {
                    ThroughputBenchmark.runOnce(client, 20 * minTasks, null);
                }
                for (int bundle : bundles) {
                    ClientOptions opts = ClientOptions.defaults().withBundleSize(bundle)
                            .withMaxInFlight(Math.max(4 * bundle, 20_000));
                    List<ThroughputBenchmark.Measurement> ms = new ArrayList<>();
                    int n;
                    try (FalkonClient client = connect.apply(opts)) {
                        // the warm-up also sizes the point: about --seconds at its rate
                        int warm = Math.max(bundle, minTasks);
                        long w0 = System.nanoTime();
                        ThroughputBenchmark.runOnce(client, warm, null);
                        double warmRate = warm / ((System.nanoTime() - w0) / 1e9);
                        n = (int) Math.min(maxTasks, Math.max(Math.max(minTasks, bundle), warmRate * seconds));
                        for (int round = 0; round < rounds; round++) {
                            long t0 = System.nanoTime();
                            ThroughputBenchmark.runOnce(client, n, null);
                            ms.add(new ThroughputBenchmark.Measurement(n, (System.nanoTime() - t0) / 1e9, 0, 0));
                        }
                    }
                    ThroughputBenchmark.Measurement m = ThroughputBenchmark.median(ms);
                    double rate = m.tasksPerSecond();
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
