package io.falkon.bench;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.executor.LocalExecutors;
import io.falkon.protocol.TaskSpec;
import org.HdrHistogram.Histogram;
import io.falkon.executor.ConnectOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * Many executors on one dispatcher (Falkon SC07 section 4.5, Figs. 9 and 10: 54,000 executors, 900
 * per machine in 4 JVMs). Here: N no-exec executors emulated in a few executor JVMs ({@code
 * falkon executor --emulate}), each with its own TCP connection to a dispatcher in this JVM, one
 * slot each; then K tasks per executor in bundles. Reports how long the executors took to
 * register, tasks/s, and the per-task overhead distribution (HdrHistogram): dispatcher to executor
 * and back (the paper's "task overhead" without the task's run time), and client to client.
 */
@Command(name = "scale", mixinStandardHelpOptions = true,
        description = "N emulated executors on one dispatcher: registration time, tasks/s, per-task overhead.")
final class ScaleBenchmark implements Callable<Integer> {

    @Option(names = "--executors", description = "emulated executors (default: ${DEFAULT-VALUE})")
    int executors = 10_000;

    @Option(names = "--jvms", description = "executor JVMs the executors are spread over (default: ${DEFAULT-VALUE})")
    int jvms = 2;

    @Option(names = "--tasks-per-executor", description = "tasks per executor (default: ${DEFAULT-VALUE})")
    int tasksPerExecutor = 10;

    @Option(names = "--bundle", description = "client bundle size (default: ${DEFAULT-VALUE})")
    int bundle = 1000;

    @Option(names = "--dispatcher", paramLabel = "HOST:PORT", description = "a running dispatcher (a real cluster) "
            + "to which --executors one-slot no-exec executors attach, e.g. falkon executor --no-exec --slots 1 "
            + "--emulate 900 on each node; registration is timed from when this starts waiting for them")
    String dispatcher;

    @Mixin
    ConnectOptions connect; // with --dispatcher: its token and TLS

    @Option(names = "--out", description = "directory for CSV and JSON (default: ${DEFAULT-VALUE})")
    Path out = Path.of("bench-results");

    @Override
    public Integer call() throws Exception {
        if (executors < jvms || jvms < 1) {
            throw new IllegalArgumentException("--executors " + executors + " must be >= --jvms " + jvms + " >= 1");
        }
        ResultTable table = new ResultTable("scale: " + executors + " emulated executors (1 slot each) on one dispatcher",
                List.of("executors", "jvms", "registerSeconds", "tasks", "seconds", "tasksPerSecond",
                        "overheadP50ms", "overheadP99ms", "overheadMaxMs", "endToEndP50ms", "endToEndP99ms"));
        ResultTable curve = Percentiles.curveTable("scale: per-task overhead percentiles (ms)");
        Machine.describe(table);
        Machine.describe(curve);
        Histogram overhead = Percentiles.micros();
        Histogram endToEnd = Percentiles.micros();
        table.meta("dispatcher", this.dispatcher == null ? "this JVM" : this.dispatcher);
        Dispatcher dispatcher = this.dispatcher == null ? Dispatcher.start(DispatcherConfig.local()) : null;
        LocalExecutors executorJvms = null;
        try {
            int n = executors * tasksPerExecutor;
            ClientOptions base = ClientOptions.defaults().withBundleSize(bundle).withMaxInFlight(Math.max(n, bundle));
            ClientOptions opts = dispatcher == null ? Target.remote(connect, base) : base.withToken(dispatcher.token());
            String address = dispatcher == null ? this.dispatcher : "127.0.0.1:" + dispatcher.port();
            long t0 = System.nanoTime();
            if (dispatcher != null) {
                executorJvms = startExecutors(dispatcher);
                // an executor JVM that dies (out of memory, out of descriptors) fails the run at once
                CompletableFuture.anyOf(dispatcher.whenExecutors(executors), executorJvms.died())
                        .get(10, TimeUnit.MINUTES);
            } else {
                try (FalkonClient waiting = FalkonClient.connect(address, opts)) {
                    Target.awaitExecutors(waiting, executors, Duration.ofMinutes(30));
                }
            }
            double registerSeconds = (System.nanoTime() - t0) / 1e9;
            System.err.printf("  %,d executors registered in %.1f s%n", executors, registerSeconds);
            double seconds;
            try (FalkonClient client = FalkonClient.connect(address, opts)) {
                ThroughputBenchmark.runOnce(client, Math.min(n, executors), null); // warm-up: one each
                seconds = run(client, n, overhead, endToEnd);
            }
            table.add(executors, dispatcher == null ? 0 : jvms, registerSeconds, n, seconds, n / seconds, Percentiles.ms(overhead, 50),
                    Percentiles.ms(overhead, 99), Percentiles.ms(overhead, 100), Percentiles.ms(endToEnd, 50),
                    Percentiles.ms(endToEnd, 99));
            System.err.printf("  %,d tasks in %.1f s: %,.0f tasks/s%n", n, seconds, n / seconds);
        } finally {
            if (executorJvms != null) {
                executorJvms.leaving();
            }
            if (dispatcher != null) {
                dispatcher.close(); // first: the executor JVMs leave when their dispatcher goes
            }
            if (executorJvms != null) {
                executorJvms.close();
            }
        }
        Percentiles.curve(curve, "dispatcher-executor-dispatcher", overhead);
        Percentiles.curve(curve, "client-client", endToEnd);
        table.print(System.out);
        table.write(out, "scale");
        curve.write(out, "scale-overhead");
        System.out.println("wrote " + out.resolve("scale.csv") + ", scale.json and scale-overhead.csv/json");
        return 0;
    }

    /** {@code jvms} executor processes, each emulating its share of the executors (the paper used 4 JVMs per machine). */
    private LocalExecutors startExecutors(Dispatcher d) throws IOException {
        if (executors % jvms != 0) {
            throw new IllegalArgumentException("--executors " + executors + " is not a multiple of --jvms " + jvms);
        }
        List<String> args = List.of("--emulate", Integer.toString(executors / jvms), "--io-threads", "2");
        return LocalExecutors.start(LocalExecutors.Impl.JAVA, jvms, 1, true, d.port(), d.token(), "scale", args);
    }

    /** Submits n no-exec tasks and records each one's overheads; returns the seconds taken. */
    private static double run(FalkonClient client, int n, Histogram overhead, Histogram endToEnd)
            throws InterruptedException {
        long t0 = System.nanoTime();
        ThroughputBenchmark.run(client, TaskSpec.of("/bin/true"), n, r -> {
            overhead.recordValue(Math.max(0, r.completedMicros() - r.dispatchedMicros()));
            endToEnd.recordValue(Math.max(0, r.deliveredMicros() - r.submittedMicros()));
        });
        return (System.nanoTime() - t0) / 1e9;
    }
}
