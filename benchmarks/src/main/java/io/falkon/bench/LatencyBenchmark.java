package io.falkon.bench;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.executor.LocalExecutors;
import io.falkon.protocol.TaskSpec;
import org.HdrHistogram.Histogram;
import io.falkon.executor.ConnectOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * One task at a time: the round trip a user waits for when a workflow has a single ready task
 * (client submit to result in hand, over TCP through the dispatcher to one executor and back).
 * No-exec isolates the software path; {@code /bin/true} adds a real process start.
 */
@Command(name = "latency", mixinStandardHelpOptions = true,
        description = "One-task round trip p50/p90/p99/p99.9, no-exec and real /bin/true.")
final class LatencyBenchmark implements Callable<Integer> {

    @Option(names = "--tasks", description = "sequential tasks per configuration (default: ${DEFAULT-VALUE})")
    int tasks = 10_000;

    @Option(names = "--modes", split = ",", description = "no-exec and/or true (default: no-exec,true)")
    List<String> modes = List.of("no-exec", "true");

    @Option(names = "--impls", split = ",", description = "executors for real tasks: java and/or c (default: java,c)")
    List<String> impls = List.of("java", "c");

    @Option(names = "--dispatcher", paramLabel = "HOST:PORT", description = "measure a running dispatcher and the "
            + "executors attached to it (a real cluster; --modes and --impls then do not apply) instead of starting "
            + "one executor here")
    String dispatcher;

    @Mixin
    ConnectOptions connect; // with --dispatcher: its token and TLS

    @Option(names = "--out", description = "directory for CSV and JSON (default: ${DEFAULT-VALUE})")
    Path out = Path.of("bench-results");

    @Override
    public Integer call() throws Exception {
        ResultTable table = new ResultTable("latency: one task at a time, client submit to result (ms)",
                List.of("mode", "executor", "tasks", "meanMs", "p50ms", "p90ms", "p99ms", "p999ms", "maxMs"));
        ResultTable curve = Percentiles.curveTable("latency: round-trip percentiles (ms)");
        Machine.describe(table);
        Machine.describe(curve);
        if (dispatcher != null) {
            try (FalkonClient client = FalkonClient.connect(dispatcher,
                    Target.remote(connect, ClientOptions.defaults().withBundleSize(1)))) {
                record(table, curve, "remote", dispatcher, sequential(client));
            }
            modes = List.of();
        }
        for (String mode : modes) {
            boolean noExec = switch (mode) {
                case "no-exec" -> true;
                case "true" -> false;
                default -> throw new IllegalArgumentException("unknown mode '" + mode + "' (no-exec or true)");
            };
            for (String implName : noExec ? List.of("emulated") : impls) {
                LocalExecutors.Impl impl = noExec ? null : LocalExecutors.Impl.parse(implName);
                record(table, curve, mode, implName, measure(noExec, impl));
            }
        }
        table.print(System.out);
        table.write(out, "latency");
        curve.write(out, "latency-percentiles");
        System.out.println("wrote " + out.resolve("latency.csv") + ", latency.json and latency-percentiles.csv/json");
        return 0;
    }

    private void record(ResultTable table, ResultTable curve, String mode, String executor, Histogram h) {
        String series = mode + " " + executor;
        table.add(mode, executor, tasks, h.getMean() / 1000.0, Percentiles.ms(h, 50), Percentiles.ms(h, 90),
                Percentiles.ms(h, 99), Percentiles.ms(h, 99.9), Percentiles.ms(h, 100));
        Percentiles.curve(curve, series, h);
        System.err.printf("  %s: p50 %.3f ms, p99 %.3f ms%n", series, Percentiles.ms(h, 50), Percentiles.ms(h, 99));
    }

    private Histogram measure(boolean noExec, LocalExecutors.Impl impl) throws Exception {
        // bundle 1: a lone task is flushed at once, as it would be in a workflow that waits on it
        ClientOptions opts = ClientOptions.defaults().withBundleSize(1);
        try (LocalCluster cluster = new LocalCluster(DispatcherConfig.local(), 1, 1, noExec, impl, 0);
             FalkonClient client = cluster.client(opts)) {
            return sequential(client);
        }
    }

    private Histogram sequential(FalkonClient client) throws Exception {
        return sequential(client, tasks);
    }

    /** A warm-up, then {@code tasks} tasks one after the other, each submitted when the last result is in. */
    static Histogram sequential(FalkonClient client, int tasks) throws Exception {
        try (Instance instance = client.createInstance("latency")) {
            TaskSpec spec = TaskSpec.of("/bin/true");
            for (int i = 0; i < Math.max(100, tasks / 5); i++) { // warm-up
                roundTrip(instance, spec);
            }
            Histogram h = Percentiles.micros();
            for (int i = 0; i < tasks; i++) {
                h.recordValue(roundTrip(instance, spec));
            }
            return h;
        }
    }

    /** Microseconds from submit to the result in hand. */
    private static long roundTrip(Instance instance, TaskSpec spec) throws Exception {
        long t0 = System.nanoTime();
        TaskResult r = instance.submit(spec).get(60, TimeUnit.SECONDS);
        long micros = (System.nanoTime() - t0) / 1000;
        if (!r.succeeded()) {
            throw new IllegalStateException("latency task failed: " + r);
        }
        return micros;
    }
}
