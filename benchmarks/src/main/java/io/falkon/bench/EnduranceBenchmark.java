package io.falkon.bench;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.executor.ConnectOptions;
import io.falkon.executor.LocalExecutors;
import io.falkon.protocol.TaskSpec;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A long no-exec run (data-diffusion report section 4.3.1, Fig. 7: 1 billion tasks in 19.2 h,
 * throughput sliding from 17K to 15K tasks/s because of a leak in the client). Client, dispatcher
 * and emulated executors share this JVM, so a leak anywhere shows: completions are sampled every
 * second with the heap in use and the time spent in GC, and the live heap after a full GC is read
 * before and after the run.
 */
@Command(name = "endurance", mixinStandardHelpOptions = true,
        description = "A long no-exec run sampled every second: throughput, heap, GC; live heap before and after.")
final class EnduranceBenchmark implements Callable<Integer> {

    @Option(names = "--tasks", description = "tasks to run (default: ${DEFAULT-VALUE})")
    long tasks = 100_000_000L;

    @Option(names = "--minutes", description = "stop submitting after this long past the warm-up, whichever "
            + "comes first (default: 0 = no limit)")
    double minutes;

    @Option(names = "--executors", description = "no-exec executors (default: ${DEFAULT-VALUE})")
    int executors = 2;

    @Option(names = "--slots", description = "slots per executor (default: ${DEFAULT-VALUE})")
    int slots = 1000;

    @Option(names = "--bundle", description = "client bundle size (default: ${DEFAULT-VALUE}, as in the paper)")
    int bundle = 100;

    @Option(names = "--in-flight", description = "most tasks submitted and not yet finished (default: ${DEFAULT-VALUE})")
    int inFlight = 100_000;

    @Option(names = "--dispatcher", paramLabel = "HOST:PORT", description = "run against a running dispatcher and "
            + "its executors (a real cluster) instead of emulated executors here; the heap figures are then the "
            + "client's alone")
    String dispatcher;

    @Mixin
    ConnectOptions connect; // with --dispatcher: its token and TLS

    @Option(names = "--out", description = "directory for CSV and JSON (default: ${DEFAULT-VALUE})")
    Path out = Path.of("bench-results");

    @Override
    public Integer call() throws Exception {
        ResultTable summary = new ResultTable("endurance: one long no-exec run (" + executors + " x " + slots
                + " slots, bundles of " + bundle + ")",
                List.of("tasks", "seconds", "tasksPerSecond", "minSampleTps", "p1SampleTps", "maxSampleTps",
                        "zeroSamples", "liveHeapStartMiB", "liveHeapEndMiB", "gcSeconds"));
        ResultTable samples = new ResultTable("endurance: one-second samples",
                List.of("second", "completed", "tasksPerSecond", "heapUsedMiB", "gcMillis"));
        Machine.describe(summary);
        Machine.describe(samples);
        AtomicLong completed = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        List<Double> rates = Collections.synchronizedList(new ArrayList<>());
        long submitted = 0;
        double seconds;
        double heapStart;
        double heapEnd;
        double gcSeconds;
        summary.meta("dispatcher", dispatcher == null ? "this JVM" : dispatcher);
        try (Target target = Target.of(dispatcher, null, connect, () -> new LocalCluster(DispatcherConfig.local(), executors,
                slots, true, (LocalExecutors.Impl) null, 0));
             FalkonClient client = target.connect(ClientOptions.defaults().withBundleSize(bundle)
                     .withMaxInFlight(inFlight))) {
            ThroughputBenchmark.runOnce(client, 200_000, null); // warm-up
            heapStart = liveHeapMiB();
            long gc0 = gcMillis();
            ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "endurance-sampler");
                t.setDaemon(true);
                return t;
            });
            long t0 = System.nanoTime();
            // --minutes counts from here: the warm-up is not part of the run
            long deadline = minutes > 0 ? t0 + (long) (minutes * 60e9) : Long.MAX_VALUE;
            long[] last = {0, gc0, t0};
            sampler.scheduleAtFixedRate(() -> {
                long now = System.nanoTime();
                long c = completed.get();
                long g = gcMillis();
                double tps = (c - last[0]) / ((now - last[2]) / 1e9);
                rates.add(tps);
                samples.add(rates.size(), c, tps, usedHeapMiB(), g - last[1]);
                if (rates.size() % 30 == 0) {
                    System.err.printf("  %,d s: %,d tasks done, %,.0f tasks/s in the last second, heap %.0f MiB%n",
                            rates.size(), c, tps, usedHeapMiB());
                }
                last[0] = c;
                last[1] = g;
                last[2] = now;
            }, 1, 1, TimeUnit.SECONDS);
            TaskSpec spec = TaskSpec.of("/bin/true");
            try (Instance instance = client.createInstance("endurance")) {
                instance.onResult(r -> {
                    completed.incrementAndGet();
                    if (!r.succeeded()) {
                        failed.incrementAndGet();
                    }
                });
                while (submitted < tasks && ((submitted & 0xFFFF) != 0 || System.nanoTime() < deadline)) {
                    instance.submit(spec); // blocks while --in-flight tasks are unfinished
                    submitted++;
                }
                if (!instance.awaitAll(Duration.ofMinutes(10))) {
                    throw new IllegalStateException(instance.outstanding() + " tasks still outstanding after 10 min");
                }
            }
            seconds = (System.nanoTime() - t0) / 1e9;
            sampler.shutdownNow();
            sampler.awaitTermination(5, TimeUnit.SECONDS);
            gcSeconds = (gcMillis() - gc0) / 1000.0;
            heapEnd = liveHeapMiB();
        }
        if (failed.get() > 0) {
            throw new IllegalStateException(failed.get() + " of " + submitted + " tasks failed");
        }
        List<Double> sorted;
        synchronized (rates) {
            // the last sample is cut short by the end of the run
            sorted = rates.subList(0, Math.max(0, rates.size() - 1)).stream().sorted().toList();
        }
        double min = sorted.isEmpty() ? 0 : sorted.get(0);
        double p1 = sorted.isEmpty() ? 0 : sorted.get(sorted.size() / 100);
        double max = sorted.isEmpty() ? 0 : sorted.get(sorted.size() - 1);
        long zeros = sorted.stream().filter(r -> r == 0).count();
        summary.add(submitted, seconds, submitted / seconds, min, p1, max, zeros, heapStart, heapEnd, gcSeconds);
        summary.print(System.out);
        summary.write(out, "endurance");
        samples.write(out, "endurance-samples");
        System.out.println("wrote " + out.resolve("endurance.csv") + ", endurance.json and endurance-samples.csv/json");
        return 0;
    }

    private static long gcMillis() {
        long sum = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            sum += Math.max(0, gc.getCollectionTime());
        }
        return sum;
    }

    private static double usedHeapMiB() {
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() / 1048576.0;
    }

    /** Heap in use after a full collection: what is really retained. */
    private static double liveHeapMiB() {
        System.gc();
        System.gc();
        return usedHeapMiB();
    }
}
