package io.falkon.bench;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.datacache.fetch.TokenBucket;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The Monotonically-Increasing workload (data-diffusion report section 4.3.3.2), scaled to one
 * machine: the arrival rate starts at 1 task/s and grows x1.3 per interval up to a maximum; each task
 * reads one object picked uniformly from the working set and computes for a fixed time; the shared
 * store's aggregate bandwidth is capped (an emulation). Run for each policy and for a cache size
 * where the working set fits in the executors' caches together and one where it does not.
 */
@Command(name = "mi", mixinStandardHelpOptions = true,
        description = "The monotonically-increasing data workload, per policy and cache size.")
final class MonotonicBenchmark implements Callable<Integer> {

    @Option(names = "--policies", split = ",", description = "(default: fa,mch,mcu,gcc)")
    List<String> policies = List.of("fa", "mch", "mcu", "gcc");

    @Option(names = "--objects", description = "objects in the working set (default: ${DEFAULT-VALUE})")
    int objects = 100;

    @Option(names = "--object-size", description = "bytes per object (default: ${DEFAULT-VALUE})")
    long objectSize = 1 << 20;

    @Option(names = "--executors", description = "(default: ${DEFAULT-VALUE})")
    int executors = 4;

    @Option(names = "--slots", description = "slots per executor (default: ${DEFAULT-VALUE})")
    int slots = 2;

    @Option(names = "--caches", split = ",", description = "per-executor cache sizes in bytes "
            + "(default: 12 MiB, where 100 MiB do not fit in 4 executors, and 50 MiB, where they do)")
    List<Long> caches = List.of(12L << 20, 50L << 20);

    @Option(names = "--store-bandwidth", description = "the shared store's aggregate cap, bytes/s "
            + "(default: ${DEFAULT-VALUE}: a tenth of the peak demand of 100 tasks/s x 1 MiB)")
    long storeBandwidth = 10L << 20;

    @Option(names = "--compute", description = "seconds each task computes (default: ${DEFAULT-VALUE})")
    double compute = 0.01;

    @Option(names = "--intervals", description = "(default: ${DEFAULT-VALUE})")
    int intervals = 24;

    @Option(names = "--interval", description = "seconds per interval (default: ${DEFAULT-VALUE})")
    double interval = 2;

    @Option(names = "--max-rate", description = "tasks/s the arrival rate stops growing at (default: ${DEFAULT-VALUE})")
    double maxRate = 100;

    @Option(names = "--seed", description = "(default: ${DEFAULT-VALUE})")
    long seed = 7;

    @Option(names = "--out", description = "directory for CSV and JSON (default: ${DEFAULT-VALUE})")
    Path out = Path.of("bench-results");

    @Override
    public Integer call() throws Exception {
        ResultTable table = new ResultTable(String.format("MI workload: %d objects x %d KiB, %d executors x %d slots, "
                        + "store capped at %d MiB/s, rate 1 -> %.0f tasks/s (x1.3 per %.1f s interval), %.0f ms compute",
                objects, objectSize >> 10, executors, slots, storeBandwidth >> 20, maxRate, interval, compute * 1000),
                List.of("policy", "cacheMiB", "fits", "tasks", "seconds", "idealSeconds", "efficiency", "localPct",
                        "peerPct", "missPct", "readMiBps", "avgResponseMs", "peakQueue", "failed"));
        Machine.describe(table);
        table.meta("workingSetMiB", objects * objectSize >> 20);
        double ideal = idealSeconds();
        try (DataWorkload w = new DataWorkload(objects, objectSize, seed)) {
            for (long cache : caches) {
                for (String p : policies) {
                    DataWorkload.Run run = run(w, p, cache);
                    boolean fits = cache * executors >= (long) objects * objectSize;
                    table.add(p, cache >> 20, fits, run.completed.get(), run.seconds, ideal, ideal / run.seconds,
                            run.pct(run.data.localHits()), run.pct(run.data.peerHits()), run.pct(run.data.misses()),
                            run.readMiBps(), run.avgResponseMillis(), run.peakQueue, run.failed.get());
                    System.err.printf("  %s, %d MiB caches: %.1f s (ideal %.1f s), efficiency %.0f%%, hits %.0f%% "
                                    + "local %.0f%% peer%n", p, cache >> 20, run.seconds, ideal, 100 * ideal / run.seconds,
                            run.pct(run.data.localHits()), run.pct(run.data.peerHits()));
                }
            }
        }
        table.print(System.out);
        table.write(out, "mi");
        return 0;
    }

    double rate(int i) {
        return Math.min(Math.pow(1.3, i), maxRate);
    }

    /** The arrival schedule's length plus one task's compute: nothing can finish sooner. */
    double idealSeconds() {
        return intervals * interval + compute;
    }

    private DataWorkload.Run run(DataWorkload w, String policy, long cache) throws Exception {
        DataWorkload.Run run = new DataWorkload.Run();
        TokenBucket cap = new TokenBucket(storeBandwidth);
        Random rnd = new Random(seed);
        try (LocalCluster cluster = w.cluster(policy, executors, slots, cache, cap);
             FalkonClient client = cluster.client(ClientOptions.defaults().withBundleSize(1))) {
            Instance in = DataWorkload.instance(client, run);
            Thread watcher = DataWorkload.queueWatcher(cluster, run);
            long t0 = System.nanoTime();
            long next = t0;
            for (int i = 0; i < intervals; i++) {
                double r = rate(i);
                long gap = (long) (1e9 / r);
                long end = t0 + (long) ((i + 1) * interval * 1e9);
                while (next < end) {
                    long wait = next - System.nanoTime();
                    if (wait > 0) {
                        LockSupport.parkNanos(wait); // the arrival process is paced by time itself
                    }
                    run.futures.add(in.submit(DataWorkload.task(List.of(w.input(rnd.nextInt(objects), "in.dat")),
                            compute)));
                    next += gap;
                }
                next = Math.max(next, end);
            }
            in.awaitAll();
            run.seconds = (System.nanoTime() - t0) / 1e9;
            watcher.interrupt();
            in.close();
        }
        TimeUnit.MILLISECONDS.sleep(100);
        return run;
    }
}
