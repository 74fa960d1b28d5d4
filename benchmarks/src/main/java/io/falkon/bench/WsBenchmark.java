package io.falkon.bench;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.transport.ws.WsConnection;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.transport.ws.WsTransport;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskSpecCodec;
import io.falkon.protocol.auth.Token;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * The Web Services interface (Falkon SC07 sections 3.2 and 4.3): WS calls/s for single-task
 * submits, and tasks/s end to end through {@code Submit} / {@code GetResults} for a sweep of
 * bundle sizes, with no-exec executors emulated in this JVM, so that what is measured is the SOAP
 * path and the dispatcher. The client is {@link FalkonClient} over {@link WsConnection} (SOAP 1.1
 * over the JDK's HTTP client), in this JVM too.
 */
@Command(name = "ws", mixinStandardHelpOptions = true,
        description = "WS calls/s for unbundled submits, and tasks/s through Submit for a bundle-size sweep.")
final class WsBenchmark implements Callable<Integer> {

    @Option(names = "--bundles", split = ",", description = "bundle sizes (default: 1,10,100,300,1000,3000,10000)")
    List<Integer> bundles = List.of(1, 10, 100, 300, 1000, 3000, 10000);

    @Option(names = "--tasks", description = "tasks per measurement for bundles of 100 and more "
            + "(default: ${DEFAULT-VALUE})")
    int tasks = 300_000;

    @Option(names = "--small-tasks", description = "tasks per measurement for bundles under 100 "
            + "(default: ${DEFAULT-VALUE})")
    int smallTasks = 10_000;

    @Option(names = "--calls", description = "sequential calls in the one-caller measurement (default: ${DEFAULT-VALUE})")
    int calls = 3_000;

    @Option(names = "--executors", description = "no-exec executors (default: ${DEFAULT-VALUE})")
    int executors = 2;

    @Option(names = "--slots", description = "slots per executor (default: ${DEFAULT-VALUE})")
    int slots = 1000;

    @Option(names = "--rounds", description = "rounds per bundle size; the median is reported (default: ${DEFAULT-VALUE})")
    int rounds = 3;

    @Option(names = "--out", description = "directory for CSV and JSON (default: ${DEFAULT-VALUE})")
    Path out = Path.of("bench-results");

    @Override
    public Integer call() throws Exception {
        ResultTable table = new ResultTable("ws: the SOAP interface, no-exec executors, client and dispatcher in one JVM",
                List.of("measure", "bundle", "tasks", "seconds", "wsCallsPerSecond", "tasksPerSecond", "p50ms",
                        "p99ms"));
        Machine.describe(table);
        table.meta("rounds", rounds);
        table.meta("executors", executors);
        table.meta("slots", slots);
        try (LocalCluster cluster = new LocalCluster(DispatcherConfig.local().withWs(0, WsTransport.Settings.defaults()),
                executors, slots, true, false)) {
            String url = cluster.dispatcher().wsUrl();
            sequentialCalls(url, cluster.token(), table);
            for (int bundle : bundles) {
                int n = Math.max(bundle, bundle < 100 ? smallTasks : tasks);
                ClientOptions opts = ClientOptions.defaults().withBundleSize(bundle)
                        .withMaxInFlight(Math.max(4 * bundle, 20_000)).withToken(cluster.token());
                try (FalkonClient client = FalkonClient.connect(url, opts)) {
                    ThroughputBenchmark.runOnce(client, Math.max(bundle, n / 5), null); // warm-up
                    List<ThroughputBenchmark.Measurement> ms = new ArrayList<>();
                    for (int round = 0; round < rounds; round++) {
                        Histogram latency = new Histogram(3_600_000_000L, 3);
                        long t0 = System.nanoTime();
                        ThroughputBenchmark.runOnce(client, n, latency);
                        ms.add(new ThroughputBenchmark.Measurement(n, (System.nanoTime() - t0) / 1e9,
                                latency.getValueAtPercentile(50) / 1000.0, latency.getValueAtPercentile(99) / 1000.0));
                    }
                    ThroughputBenchmark.Measurement m = ThroughputBenchmark.median(ms);
                    double submits = Math.ceil((double) n / bundle);
                    table.add("end-to-end", bundle, n, m.seconds(), submits / m.seconds(), m.tasksPerSecond(), m.p50ms(),
                            m.p99ms());
                    System.err.printf("  bundle %,d: %,.0f tasks/s (%,.0f Submit calls/s), median of %d%n", bundle,
                            m.tasksPerSecond(), submits / m.seconds(), rounds);
                }
            }
        }
        table.print(System.out);
        table.write(out, "ws");
        System.out.println("wrote " + out.resolve("ws.csv") + " and ws.json");
        return 0;
    }

    /** One caller, one call at a time: the round-trip rate of a Submit of one task, and of GetStatus. */
    private void sequentialCalls(String url, Token token, ResultTable table) {
        try (WsConnection c = WsConnection.connect(url, token, null, Duration.ofSeconds(10))) {
            long instance = c.createInstance("ws-bench", 0).join().instanceId();
            List<Message.SubmittedTask> one = List.of(new Message.SubmittedTask(0,
                    TaskSpecCodec.encode(TaskSpec.of("/bin/true"))));
            for (String what : List.of("Submit(1 task)", "GetStatus")) {
                for (int i = 0; i < calls / 5; i++) { // warm-up
                    call(c, what, instance, one);
                }
                Histogram latency = new Histogram(3_600_000_000L, 3);
                long t0 = System.nanoTime();
                for (int i = 0; i < calls; i++) {
                    long s = System.nanoTime();
                    call(c, what, instance, one);
                    latency.recordValue((System.nanoTime() - s) / 1000);
                }
                double s = (System.nanoTime() - t0) / 1e9;
                table.add("sequential " + what, what.startsWith("Submit") ? 1 : 0, what.startsWith("Submit") ? calls : 0,
                        s, calls / s, what.startsWith("Submit") ? calls / s : 0.0,
                        latency.getValueAtPercentile(50) / 1000.0, latency.getValueAtPercentile(99) / 1000.0);
                System.err.printf("  one caller, %s: %,.0f calls/s%n", what, calls / s);
            }
            c.destroy(instance).join();
        }
    }

    private static void call(WsConnection c, String what, long instance, List<Message.SubmittedTask> one) {
        if (what.startsWith("Submit")) {
            c.submit(instance, one).join();
        } else {
            c.status(instance).join();
        }
    }
}
