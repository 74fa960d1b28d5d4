package io.falkon.bench;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.protocol.TaskSpec;
import io.falkon.executor.ConnectOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * Efficiency vs task length and executor count (Falkon SC07 section 4.4, Figs. 6 and 7: 95% with
 * 1 s tasks on 256 executors, 99% with 8 s tasks). Weak scaling as in the paper: each executor (one
 * slot, the paper's one executor per processor) gets the same number of real {@code sleep L}
 * processes; efficiency is the ideal time (tasks per executor x L) over the measured time from
 * the first submission to the last result. {@code sleep} takes no CPU, so executor counts beyond
 * this machine's cores measure the dispatch and process-start path, not CPU contention.
 */
@Command(name = "efficiency", mixinStandardHelpOptions = true,
        description = "Efficiency vs task length (sleep 0.01 ... 8 s) x executor count, real processes.")
final class EfficiencyBenchmark implements Callable<Integer> {

    @Option(names = "--lengths", split = ",", description = "task lengths in seconds (default: 0.01,0.1,1,8)")
    List<Double> lengths = List.of(0.01, 0.1, 1.0, 8.0);

    @Option(names = "--executors", split = ",", description = "executor counts, one slot each (default: 1,8,64,256)")
    List<Integer> executorCounts = List.of(1, 8, 64, 256);

    @Option(names = "--tasks-per-executor", description = "tasks per executor (default: ${DEFAULT-VALUE})")
    int tasksPerExecutor = 4;

    @Option(names = "--dispatcher", paramLabel = "HOST:PORT", description = "measure a running dispatcher with "
            + "--executors one-slot executors already attached (a real cluster; give one count) instead of starting "
            + "executors here")
    String dispatcher;

    @Mixin
    ConnectOptions connect; // with --dispatcher: its token and TLS

    @Option(names = "--out", description = "directory for CSV and JSON (default: ${DEFAULT-VALUE})")
    Path out = Path.of("bench-results");

    @Override
    public Integer call() throws Exception {
        ResultTable table = new ResultTable("efficiency: ideal / measured time, sleep tasks, 1 slot per executor",
                List.of("executors", "taskSeconds", "tasks", "idealSeconds", "seconds", "efficiency", "speedup"));
        Machine.describe(table);
        table.meta("tasksPerExecutor", tasksPerExecutor);
        if (dispatcher != null && executorCounts.size() != 1) {
            throw new IllegalArgumentException("with --dispatcher, give the one executor count attached to it "
                    + "(--executors N), not " + executorCounts);
        }
        table.meta("dispatcher", dispatcher == null ? "this JVM" : dispatcher);
        for (int executors : executorCounts) {
            // executors in this JVM, each its own connection and slot, starting real processes
            try (Target target = Target.of(dispatcher, null, connect, () -> new LocalCluster(DispatcherConfig.local(),
                    executors, 1, false, false));
                 FalkonClient client = target.connect(ClientOptions.defaults().withBundleSize(100))) {
                run(client, List.of("/bin/true"), executors); // warm-up: every executor starts one process
                for (double length : lengths) {
                    int n = executors * tasksPerExecutor;
                    double ideal = tasksPerExecutor * length;
                    double seconds = run(client, List.of("/bin/sleep", Double.toString(length)), n);
                    double efficiency = ideal / seconds;
                    table.add(executors, length, n, ideal, seconds, efficiency, efficiency * executors);
                    System.err.printf("  %d executors, %s s tasks: %.1f%% (%.2f s, ideal %.2f s)%n", executors,
                            length, 100 * efficiency, seconds, ideal);
                }
            }
        }
        table.print(System.out);
        table.write(out, "efficiency");
        System.out.println("wrote " + out.resolve("efficiency.csv") + " and efficiency.json");
        return 0;
    }

    /** Runs n copies of argv; returns the seconds from the first submission to the last result. */
    private static double run(FalkonClient client, List<String> argv, int n) throws InterruptedException {
        long t0 = System.nanoTime();
        ThroughputBenchmark.run(client, TaskSpec.of(argv.toArray(String[]::new)), n, r -> { });
        return (System.nanoTime() - t0) / 1e9;
    }
}
