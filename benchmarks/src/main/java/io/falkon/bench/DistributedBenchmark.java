package io.falkon.bench;

import io.falkon.client.ClientOptions;
import io.falkon.client.DistributedClient;
import io.falkon.client.DistributedInstance;
import io.falkon.executor.LocalExecutors;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.auth.Token;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.management.OperatingSystemMXBean;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The 3-tier layout of Falkon on Blue Gene/P (seed 000, §4.2–4.3.1), emulated on one machine: D
 * dispatcher processes, each with E no-exec executors emulated in one executor JVM, and one
 * {@link DistributedClient} in this JVM spreading N tasks over them. Measures the rate, and the CPU
 * each tier spends per task (client: this process; dispatchers and executors: their processes, from
 * /proc), the constants docs/scaling.md projects 640 dispatchers x 256 executors from.
 */
@Command(name = "distributed", mixinStandardHelpOptions = true,
        description = "D dispatcher processes x E emulated no-exec executors, one client spreading N tasks: "
                + "tasks/s and CPU per task of each tier.")
final class DistributedBenchmark implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final double CLOCK_TICK_SECONDS = 0.01; // USER_HZ on Linux

    @Option(names = "--dispatchers", description = "dispatcher processes (default: ${DEFAULT-VALUE})")
    int dispatchers = 16;

    @Option(names = "--executors-per-dispatcher", description = "emulated executors behind each (default: ${DEFAULT-VALUE})")
    int perDispatcher = 256;

    @Option(names = "--tasks", description = "no-exec tasks (default: ${DEFAULT-VALUE})")
    int tasks = 1_000_000;

    @Option(names = "--sweep", description = "then the efficiency-by-task-length sweep of seed 000's Fig. 6: "
            + "sleep tasks of the paper's 1-256 s divided by --time-scale, 7 per executor (weak scaling), behind "
            + "each of --sweep-dispatchers")
    boolean sweep;

    @Option(names = "--time-scale", description = "the sweep's task lengths are the paper's divided by this "
            + "(default: ${DEFAULT-VALUE}: 1 s becomes 15.6 ms)")
    double timeScale = 64;

    @Option(names = "--sweep-dispatchers", split = ",", description = "dispatcher counts the sweep uses, "
            + "each with its executors (default: 1,4,16)")
    List<Integer> sweepDispatchers = List.of(1, 4, 16);

    @Option(names = "--out", description = "directory for CSV and JSON (default: ${DEFAULT-VALUE})")
    Path out = Path.of("bench-results");

    @Override
    public Integer call() throws Exception {
        ResultTable table = new ResultTable("distributed: " + dispatchers + " dispatchers x " + perDispatcher
                + " emulated executors, one client", List.of("dispatchers", "executors", "tasks", "seconds",
                "tasksPerSecond", "clientCpuMicrosPerTask", "dispatcherCpuMicrosPerTask", "executorCpuMicrosPerTask"));
        Machine.describe(table);
        Token token = Token.random();
        List<DispatcherProcess> ds = new ArrayList<>();
        List<LocalExecutors> es = new ArrayList<>();
        try {
            List<String> addresses = new ArrayList<>();
            for (int i = 0; i < dispatchers; i++) {
                DispatcherProcess d = new DispatcherProcess(List.of("-Xmx384m", "-XX:+UseParallelGC",
                        "-XX:ParallelGCThreads=1"), List.of("--io-threads", "1"), token);
                ds.add(d);
                addresses.add("127.0.0.1:" + d.port());
                es.add(LocalExecutors.start(LocalExecutors.Impl.JAVA, 1, 1, true, d.port(), token, "d" + i,
                        List.of("--emulate", Integer.toString(perDispatcher), "--io-threads", "1",
                                "--no-exec-sleep")));
            }
            try (DistributedClient client = DistributedClient.connect(String.join(",", addresses), opts(token))) {
                long t0 = System.nanoTime();
                int want = dispatchers * perDispatcher;
                while (JSON.readTree(client.status()).path("executors").path("registered").asInt() < want) {
                    if (System.nanoTime() - t0 > TimeUnit.MINUTES.toNanos(10)) {
                        throw new IllegalStateException("the emulated executors did not all register in 10 min");
                    }
                    TimeUnit.MILLISECONDS.sleep(200); // polling the dispatchers' status: nothing else to wait on
                }
                System.err.printf("  %,d executors registered on %d dispatchers in %.1f s%n", want, dispatchers,
                        (System.nanoTime() - t0) / 1e9);
                run(client, Math.min(tasks, want * 4)); // warm-up: JIT in every tier
                long[] before = cpu(ds, es);
                long start = System.nanoTime();
                run(client, tasks);
                double seconds = (System.nanoTime() - start) / 1e9;
                long[] after = cpu(ds, es);
                double[] perTask = new double[3];
                for (int k = 0; k < 3; k++) {
                    perTask[k] = (after[k] - before[k]) / 1e3 / tasks;
                }
                table.add(dispatchers, want, tasks, seconds, tasks / seconds, perTask[0], perTask[1], perTask[2]);
                System.err.printf("  %,d tasks in %.1f s: %,.0f tasks/s; CPU per task: client %.1f µs, dispatchers "
                        + "%.1f µs, executors %.1f µs%n", tasks, seconds, tasks / seconds, perTask[0], perTask[1],
                        perTask[2]);
            }
            if (sweep) {
                ResultTable efficiency = sweep(addresses, opts(token));
                efficiency.print(System.out);
                efficiency.write(out, "distributed-sweep");
            }
        } finally {
            for (DispatcherProcess d : ds) {
                d.close();
            }
            for (LocalExecutors e : es) {
                e.close();
            }
        }
        table.print(System.out);
        table.write(out, "distributed");
        System.out.println("wrote " + out.resolve("distributed.csv") + " and distributed.json");
        return 0;
    }

    private ClientOptions opts(Token token) {
        return ClientOptions.defaults().withToken(token).withBundleSize(1000)
                .withMaxInFlight(Math.max(1000, 4 * dispatchers * perDispatcher));
    }

    /**
     * Seed 000's Fig. 6 scaled in time: for each dispatcher count and each task length, 7 sleep tasks
     * per executor (weak scaling, as the paper ran them); efficiency is the ideal time (7 lengths)
     * over the measured one.
     */
    private ResultTable sweep(List<String> addresses, ClientOptions opts) throws Exception {
        ResultTable t = new ResultTable("efficiency by task length (seed 000 Fig. 6, lengths / " + timeScale
                + "), 7 tasks per executor", List.of("dispatchers", "executors", "paperSeconds", "taskMillis",
                "tasks", "seconds", "efficiency"));
        Machine.describe(t);
        for (int k : sweepDispatchers) {
            if (k < 1 || k > dispatchers) {
                continue;
            }
            try (DistributedClient client = DistributedClient.connect(String.join(",", addresses.subList(0, k)),
                    opts)) {
                int executors = k * perDispatcher;
                for (int paperSeconds = 1; paperSeconds <= 256; paperSeconds *= 2) {
                    double length = paperSeconds / timeScale;
                    int n = 7 * executors;
                    long start = System.nanoTime();
                    run(client, n, TaskSpec.of("sleep", String.format(Locale.ROOT, "%.4f", length)));
                    double seconds = (System.nanoTime() - start) / 1e9;
                    double eff = 7 * length / seconds;
                    t.add(k, executors, paperSeconds, length * 1000, n, seconds, eff);
                    System.err.printf("  %d dispatcher(s), %,d executors, %.1f ms tasks (paper %d s): %.1f s, "
                            + "efficiency %.0f%%%n", k, executors, length * 1000, paperSeconds, seconds, eff * 100);
                }
            }
        }
        return t;
    }

    private static void run(DistributedClient client, int n) throws InterruptedException {
        run(client, n, TaskSpec.of("/bin/true"));
    }

    private static void run(DistributedClient client, int n, TaskSpec spec) throws InterruptedException {
        DistributedInstance in = client.createInstance("bench");
        AtomicLong failed = new AtomicLong();
        in.onResult(r -> {
            if (!r.succeeded()) {
                failed.incrementAndGet();
            }
        });
        for (int i = 0; i < n; i++) {
            in.submit(spec);
        }
        if (!in.awaitAll(Duration.ofMinutes(30)) || failed.get() > 0 || in.lostCause() != null) {
            throw new IllegalStateException("the run did not complete: " + failed.get() + " failed, "
                    + in.outstanding() + " unfinished, " + in.lostCause());
        }
        in.close();
    }

    /** CPU nanoseconds so far of the client (this JVM), the dispatchers and the executors. */
    private static long[] cpu(List<DispatcherProcess> ds, List<LocalExecutors> es) throws IOException {
        long client = ((OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
        long dispatchers = 0;
        for (DispatcherProcess d : ds) {
            dispatchers += processCpu(d.pid());
        }
        long executors = 0;
        for (LocalExecutors e : es) {
            for (Process p : e.processes()) {
                executors += processCpu(p.pid());
            }
        }
        return new long[] {client, dispatchers, executors};
    }

    /** utime + stime of a process, from /proc/PID/stat, in nanoseconds. */
    static long processCpu(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        // after "pid (comm) ", field 3 (state) is f[0]: utime is field 14, stime field 15
        long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
        return (long) (ticks * CLOCK_TICK_SECONDS * 1e9);
    }
}
