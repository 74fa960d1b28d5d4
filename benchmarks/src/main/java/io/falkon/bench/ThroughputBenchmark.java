package io.falkon.bench;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.executor.ConnectOptions;
import io.falkon.executor.LocalExecutors;
import io.falkon.protocol.TaskSpec;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The papers' "sleep 0" microbenchmark (Falkon SC07 section 4.1): N tasks over E executors x S
 * slots, end to end (client, dispatcher, executors, back to the client over 127.0.0.1), in no-exec
 * mode (dispatch overhead alone) and with real {@code /bin/true} processes, for several bundle
 * sizes; plus the C posix_spawn + waitpid loop as the physical limit, in the same run.
 */
@Command(name = "throughput", mixinStandardHelpOptions = true,
        description = "Tasks/s end to end vs bundle size, no-exec and real /bin/true, beside a C spawn loop.")
final class ThroughputBenchmark implements Callable<Integer> {

    @Option(names = "--tasks", description = "tasks per no-exec measurement (default: ${DEFAULT-VALUE})")
    int tasks = 100_000;

    @Option(names = "--real-tasks", description = "tasks per /bin/true measurement (default: ${DEFAULT-VALUE})")
    int realTasks = 20_000;

    @Option(names = "--executors", split = ",", description = "executor counts to measure, e.g. 1,2,4,...,1024: the "
            + "paper's throughput vs executor count (Falkon SC07 Fig. 3); no-exec executors are emulated in this JVM, "
            + "so counts in the thousands fit (default: 2)")
    List<Integer> executorCounts = List.of(2);

    @Option(names = "--slots", description = "slots per executor in no-exec mode (default: ${DEFAULT-VALUE})")
    int noExecSlots = 1000;

    @Option(names = "--real-slots", description = "slots per executor with real processes (default: cores)")
    int realSlots = Runtime.getRuntime().availableProcessors();

    @Option(names = "--bundles", split = ",", description = "client bundle sizes (default: 1,10,100)")
    List<Integer> bundles = List.of(1, 10, 100);

    @Option(names = "--modes", split = ",", description = "no-exec and/or true (default: no-exec,true)")
    List<String> modes = List.of("no-exec", "true");

    @Option(names = "--prefetch", split = ",", description = "executor prefetch values to measure real tasks with "
            + "(default: 0,8; no-exec runs use 0)")
    List<Integer> prefetches = List.of(0, 8);

    @Option(names = "--spawners", description = "concurrent spawners in the C baseline (default: ${DEFAULT-VALUE})")
    int spawners = 2;

    @Option(names = "--rounds", description = "rounds per real-task configuration, each right after a run of the C "
            + "loop; the median is reported (default: ${DEFAULT-VALUE})")
    int rounds = 3;

    @Option(names = "--warmup", description = "fraction of the tasks run first to warm up (default: ${DEFAULT-VALUE})")
    double warmup = 0.2;

    @Option(names = "--impls", split = ",", description = "executor implementations to measure real tasks with: "
            + "java and/or c (default: java,c)")
    List<String> impls = List.of("java", "c");

    @Option(names = "--executor-processes", negatable = true, description = "with real tasks, run executors as "
            + "their own JVMs as in production (default: ${DEFAULT-VALUE}); no-exec executors always run in this JVM")
    boolean executorProcesses = true;

    @Option(names = "--out", description = "directory for CSV and JSON (default: ${DEFAULT-VALUE})")
    Path out = Path.of("bench-results");

    @Option(names = "--dispatcher", paramLabel = "HOST:PORT", description = "measure a running dispatcher and the "
            + "executors attached to it (a real cluster): --tasks /bin/true tasks per bundle size, whatever the "
            + "executors do with them (--no-exec executors measure dispatch alone); --modes, --impls, --prefetch "
            + "and --executors then do not apply")
    String dispatcher;

    @Mixin
    ConnectOptions connect; // with --dispatcher: its token and TLS

    @Option(names = "--name", description = "result file name, so that sweeps can sit beside the default run, e.g. "
            + "throughput-executors (plotted as SC07 Fig. 3) (default: ${DEFAULT-VALUE})")
    String name = "throughput";

    @Override
    public Integer call() throws Exception {
        ResultTable table = new ResultTable("throughput: tasks/s end to end (client -> dispatcher -> executors -> client)",
                List.of("mode", "executor", "executors", "slots", "prefetch", "bundle", "tasks", "seconds",
                        "tasksPerSecond", "p50ms", "p99ms", "cLoopTasksPerSecond", "pctOfCLoop"));
        Machine.describe(table);
        table.meta("rounds", rounds);
        if (dispatcher != null) {
            remote(table);
            modes = List.of();
        }
        List<LocalExecutors.Impl> chosen = impls.stream().map(LocalExecutors.Impl::parse).toList();
        SpawnBaseline loop = modes.contains("true") ? SpawnBaseline.compile() : null;
        List<Double> allLoops = new ArrayList<>();
        for (String mode : modes) {
            boolean noExec = switch (mode) {
                case "no-exec" -> true;
                case "true" -> false;
                default -> throw new IllegalArgumentException("unknown mode '" + mode + "' (no-exec or true)");
            };
            // no-exec executors are emulated in this JVM: the dispatch path alone
            List<LocalExecutors.Impl> runs = noExec ? Collections.singletonList(null) : chosen;
            for (LocalExecutors.Impl impl : runs) {
                for (int executors : executorCounts) {
                    for (int prefetch : noExec ? List.of(0) : prefetches) {
                        for (int bundle : bundles) {
                            int n = noExec ? tasks : realTasks;
                            int slots = noExec ? noExecSlots : realSlots;
                            String name = impl == null ? "emulated" : impl.name().toLowerCase(Locale.ROOT);
                            // real tasks: each round runs the C loop right before the executors, so that the
                            // ratio compares like with like on a shared machine whose speed drifts
                            List<Measurement> ms = new ArrayList<>();
                            List<Double> loops = new ArrayList<>();
                            for (int round = 0; round < (noExec ? 1 : rounds); round++) {
                                if (!noExec) {
                                    loops.add(loop.run(n, spawners, "/bin/true"));
                                }
                                ms.add(measure(noExec, impl, executors, bundle, n, slots, prefetch));
                            }
                            Measurement m = median(ms);
                            double c = loops.isEmpty() ? 0 : medianOf(loops);
                            allLoops.addAll(loops);
                            table.add(mode, name, executors, slots, prefetch, bundle, n, m.seconds, m.tasksPerSecond(),
                                    m.p50ms, m.p99ms, c, c == 0 ? 0.0 : 100 * m.tasksPerSecond() / c);
                            System.err.printf("  %s %s %d x %d prefetch %d bundle %d: %,.0f tasks/s%s%n", mode, name,
                                    executors, slots, prefetch, bundle, m.tasksPerSecond(), c == 0 ? ""
                                            : String.format(" (C loop %,.0f: %.0f%%)", c, 100 * m.tasksPerSecond() / c));
                        }
                    }
                }
            }
        }
        if (!allLoops.isEmpty()) {
            double c = medianOf(allLoops);
            table.add("c-spawn-loop", "", 0, spawners, 0, 0, realTasks, realTasks / c, c, 0.0, 0.0, c, 100.0);
            table.meta("cSpawnLoopTasksPerSecond", c);
        }
        table.print(System.out);
        table.write(out, name);
        System.out.println("wrote " + out.resolve(name + ".csv") + " and " + name + ".json");
        return 0;
    }

    /** The same measurement against a running dispatcher, one row per bundle size. */
    private void remote(ResultTable table) throws Exception {
        table.meta("dispatcher", dispatcher);
        for (int bundle : bundles) {
            ClientOptions opts = Target.remote(connect, ClientOptions.defaults().withBundleSize(bundle)
                    .withMaxInFlight(Math.max(bundle, 100_000)));
            List<Measurement> ms = new ArrayList<>();
            int[] attached;
            try (FalkonClient client = FalkonClient.connect(dispatcher, opts)) {
                attached = Target.executors(client);
                runOnce(client, (int) Math.max(bundle, tasks * warmup), null);
                for (int round = 0; round < rounds; round++) {
                    Histogram latency = Percentiles.micros();
                    long t0 = System.nanoTime();
                    runOnce(client, tasks, latency);
                    ms.add(new Measurement(tasks, (System.nanoTime() - t0) / 1e9, Percentiles.ms(latency, 50),
                            Percentiles.ms(latency, 99)));
                }
            }
            Measurement m = median(ms);
            table.add("remote", "attached", attached[0], attached[1], 0, bundle, tasks, m.seconds, m.tasksPerSecond(),
                    m.p50ms, m.p99ms, 0.0, 0.0);
            System.err.printf("  %s, %d executors / %d slots, bundle %d: %,.0f tasks/s%n", dispatcher, attached[0],
                    attached[1], bundle, m.tasksPerSecond());
        }
    }

    static double medianOf(List<Double> xs) {
        List<Double> sorted = xs.stream().sorted().toList();
        return sorted.get(sorted.size() / 2);
    }

    /** The round with the median rate. */
    static Measurement median(List<Measurement> ms) {
        List<Measurement> sorted = ms.stream()
                .sorted(Comparator.comparingDouble(Measurement::tasksPerSecond)).toList();
        return sorted.get(sorted.size() / 2);
    }

    record Measurement(long tasks, double seconds, double p50ms, double p99ms) {
        double tasksPerSecond() {
            return tasks / seconds;
        }
    }

    private Measurement measure(boolean noExec, LocalExecutors.Impl impl, int executors, int bundle, int n, int slots,
                                int prefetch) throws Exception {
        ClientOptions opts = ClientOptions.defaults().withBundleSize(bundle).withMaxInFlight(Math.max(bundle, 100_000));
        LocalExecutors.Impl processes = noExec || (!executorProcesses && impl == LocalExecutors.Impl.JAVA) ? null : impl;
        try (LocalCluster cluster = new LocalCluster(DispatcherConfig.local(), executors, slots, noExec, processes,
                prefetch);
             FalkonClient client = cluster.client(opts)) {
            runOnce(client, (int) Math.max(bundle, n * warmup), null);
            Histogram latency = new Histogram(3_600_000_000L, 3);
            long t0 = System.nanoTime();
            runOnce(client, n, latency);
            double seconds = (System.nanoTime() - t0) / 1e9;
            return new Measurement(n, seconds, latency.getValueAtPercentile(50) / 1000.0,
                    latency.getValueAtPercentile(99) / 1000.0);
        }
    }

    /** Submits n /bin/true tasks in bundles and waits for all; records submit-to-delivery latency. */
    static void runOnce(FalkonClient client, int n, Histogram latency) throws InterruptedException {
        run(client, TaskSpec.of("/bin/true"), n, latency == null ? r -> { }
                : r -> latency.recordValue(Math.max(0, r.deliveredMicros() - r.submittedMicros())));
    }

    /**
     * Submits n copies of spec (bundled by the instance) and waits for all of them; hands every
     * result to {@code each} (on the client's I/O thread).
     *
     * @throws IllegalStateException if any task failed, or some are unfinished after an hour
     */
    static void run(FalkonClient client, TaskSpec spec, int n, Consumer<TaskResult> each)
            throws InterruptedException {
        AtomicLong failures = new AtomicLong();
        try (Instance instance = client.createInstance("bench")) {
            instance.onResult(r -> {
                if (!r.succeeded()) {
                    failures.incrementAndGet();
                }
                each.accept(r);
            });
            for (int i = 0; i < n; i++) {
                instance.submit(spec);
            }
            if (!instance.awaitAll(Duration.ofHours(1))) {
                throw new IllegalStateException(instance.outstanding() + " of " + n + " benchmark tasks unfinished "
                        + "after an hour");
            }
        }
        if (failures.get() > 0) {
            throw new IllegalStateException(failures.get() + " of " + n + " benchmark tasks (" + spec.argv()
                    + ") failed");
        }
    }
}
