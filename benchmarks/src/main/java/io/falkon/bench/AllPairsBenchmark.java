package io.falkon.bench;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.datacache.fetch.TokenBucket;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * All-Pairs (data-diffusion report section 4.3.3.3), scaled: for n objects, one task per pair (i, j)
 * reads both and computes for a fixed time. Efficiency is measured against the all-local ideal:
 * every task's compute time spread over every slot, with no data movement at all.
 */
@Command(name = "allpairs", mixinStandardHelpOptions = true,
        description = "All-Pairs efficiency against the all-local ideal, per policy.")
final class AllPairsBenchmark implements Callable<Integer> {

    @Option(names = "--n", description = "objects: n x n tasks (default: ${DEFAULT-VALUE})")
    int n = 24;

    @Option(names = "--object-size", description = "bytes per object (default: ${DEFAULT-VALUE})")
    long objectSize = 1 << 20;

    @Option(names = "--policies", split = ",", description = "(default: fa,gcc)")
    List<String> policies = List.of("fa", "gcc");

    @Option(names = "--executors", description = "(default: ${DEFAULT-VALUE})")
    int executors = 4;

    @Option(names = "--slots", description = "(default: ${DEFAULT-VALUE})")
    int slots = 2;

    @Option(names = "--cache", description = "per-executor cache bytes (default: ${DEFAULT-VALUE})")
    long cache = 64L << 20;

    @Option(names = "--store-bandwidth", description = "bytes/s (default: ${DEFAULT-VALUE})")
    long storeBandwidth = 20L << 20;

    @Option(names = "--compute", description = "seconds per task (default: ${DEFAULT-VALUE})")
    double compute = 0.1;

    @Option(names = "--out", description = "directory for CSV and JSON (default: ${DEFAULT-VALUE})")
    Path out = Path.of("bench-results");

    @Override
    public Integer call() throws Exception {
        int tasks = n * n;
        double ideal = tasks * compute / (executors * slots);
        ResultTable table = new ResultTable(String.format("All-Pairs %dx%d: %d tasks reading 2 of %d objects of %d KiB, "
                        + "%.0f ms compute, %d executors x %d slots, store capped at %d MiB/s", n, n, tasks, n,
                objectSize >> 10, compute * 1000, executors, slots, storeBandwidth >> 20),
                List.of("policy", "tasks", "seconds", "idealSeconds", "efficiency", "localPct", "peerPct", "missPct",
                        "readMiBps", "failed"));
        Machine.describe(table);
        try (DataWorkload w = new DataWorkload(n, objectSize, 11)) {
            for (String p : policies) {
                DataWorkload.Run run = new DataWorkload.Run();
                try (LocalCluster cluster = w.cluster(p, executors, slots, cache, new TokenBucket(storeBandwidth));
                     FalkonClient client = cluster.client(ClientOptions.defaults())) {
                    Instance in = DataWorkload.instance(client, run);
                    long t0 = System.nanoTime();
                    for (int i = 0; i < n; i++) {
                        for (int j = 0; j < n; j++) {
                            in.submit(DataWorkload.task(List.of(w.input(i, "a.dat"), w.input(j, "b.dat")), compute));
                        }
                    }
                    in.awaitAll();
                    run.seconds = (System.nanoTime() - t0) / 1e9;
                    in.close();
                }
                table.add(p, run.completed.get(), run.seconds, ideal, ideal / run.seconds, run.pct(run.data.localHits()),
                        run.pct(run.data.peerHits()), run.pct(run.data.misses()), run.readMiBps(), run.failed.get());
                System.err.printf("  %s: %.1f s (all-local ideal %.1f s): %.0f%%%n", p, run.seconds, ideal,
                        100 * ideal / run.seconds);
            }
        }
        table.print(System.out);
        table.write(out, "allpairs");
        return 0;
    }
}
