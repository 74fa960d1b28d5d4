package io.falkon.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.executor.LocalExecutors;
import io.falkon.protocol.TaskSpec;
import io.falkon.provisioner.AcquisitionPolicy;
import io.falkon.provisioner.LrmAdapter;
import io.falkon.provisioner.Provisioner;
import io.falkon.provisioner.ReleasePolicy;
import io.falkon.provisioner.Planner;
import io.falkon.provisioner.lrm.LocalAdapter;
import io.falkon.provisioner.lrm.Shell;
import io.falkon.provisioner.lrm.SlurmAdapter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

/**
 * The 18-stage workload of Falkon SC07 §4.6 (Fig. 11, Tables 3 and 4), time-scaled: 1,000 tasks of
 * 60 s (120 s, 6 s and 12 s in stages 8, 9 and 10), 17,820 CPU-seconds, ideally 1,260 s on 32
 * machines; the stages run one after the other. Provisioned with all-at-once acquisition and
 * distributed release for several idle times, plus ∞ (32 nodes held throughout, acquired before the
 * clock starts). The scheduler is emulated (the local adapter with {@link InProcessNodes}): allocations wait a fixed
 * latency, then their executors start in this JVM and run real {@code /bin/sleep} processes.
 */
@Command(name = "provisioning", mixinStandardHelpOptions = true,
        description = "The SC07 18-stage workload under dynamic provisioning, time-scaled (Table 4).")
final class ProvisioningBenchmark implements Callable<Integer> {

    /**
     * Tasks per stage. The paper gives the shape (Fig. 11) and the totals, not the counts; these
     * follow the shape — doubling to stage 7, a drop at 8, a surge at 9 and 10, a drop at 11, a
     * rise at 12, a linear fall over 13–14, halving to 1 — and meet every total: 1,000 tasks,
     * 17,820 CPU-seconds, ideal 1,260 s on 32 machines.
     */
    static final int[] STAGE_TASKS = {1, 2, 4, 8, 16, 32, 64, 4, 686, 112, 8, 24, 16, 8, 8, 4, 2, 1};

    /** Task length of each stage in the paper's seconds. */
    static double paperSeconds(int stage) {
        return switch (stage) {
            case 8 -> 120;
            case 9 -> 6;
            case 10 -> 12;
            default -> 60;
        };
    }

    @Option(names = "--scale", description = "paper seconds per benchmark second (default: ${DEFAULT-VALUE})")
    double scale = 60;

    @Option(names = "--idle", split = ",", description = "release idle times in paper seconds; inf for none "
            + "(default: 15,60,120,180,inf)")
    List<String> idles = List.of("15", "60", "120", "180", "inf");

    @Option(names = "--latency", description = "allocation latency in paper seconds, from request to executors "
            + "registered (the paper saw 5-65 s with PBS) (default: ${DEFAULT-VALUE})")
    double latency = 30;

    @Option(names = "--max-nodes", description = "nodes at most (default: ${DEFAULT-VALUE})")
    int maxNodes = 32;

    @Option(names = "--slots", description = "slots of each node's executor (default: ${DEFAULT-VALUE})")
    int slots = 1;

    @Option(names = "--lrm", description = "in-process (emulated latency, nodes in this JVM) or slurm (the real "
            + "SLURM on this machine with its real latency; executors are processes) (default: ${DEFAULT-VALUE})")
    String lrm = "in-process";

    @Option(names = "--acquisition", description = "acquisition policy (default: ${DEFAULT-VALUE})")
    String acquisition = "all-at-once";

    @Option(names = "--stages", description = "run only the first N stages (smoke runs) (default: all 18)")
    int stages = STAGE_TASKS.length;

    @Option(names = "--out", description = "directory for CSV and JSON (default: ${DEFAULT-VALUE})")
    Path out = Path.of("bench-results");

    @Override
    public Integer call() throws Exception {
        ResultTable table = new ResultTable("provisioning: the 18-stage workload, time-scaled 1:" + (int) scale
                + " (all times in paper seconds)", List.of("config", "idleSeconds", "timeToComplete",
                "resourceUtilization", "executionEfficiency", "allocations", "avgQueueSeconds", "avgExecSeconds",
                "usedCpuSeconds", "wastedCpuSeconds"));
        Machine.describe(table);
        table.meta("scale", scale);
        table.meta("latencyPaperSeconds", lrm.equals("slurm") ? "real SLURM" : latency);
        table.meta("lrm", lrm);
        table.meta("slotsPerNode", slots);
        table.meta("stageTasks", STAGE_TASKS);
        double ideal = idealSeconds();
        table.meta("idealPaperSeconds", ideal);
        for (String idle : idles) {
            Row r = run(idle.equals("inf") ? -1 : Double.parseDouble(idle));
            table.add("falkon-" + idle, idle, r.seconds * scale, r.used / (r.used + r.wasted), ideal / (r.seconds * scale),
                    r.allocations, r.avgQueue * scale, r.avgExec * scale, r.used * scale, r.wasted * scale);
            System.err.printf("  idle %s: %.0f s, utilization %.0f%%, efficiency %.0f%%, %d allocations%n", idle,
                    r.seconds * scale, 100 * r.used / (r.used + r.wasted), 100 * ideal / (r.seconds * scale),
                    r.allocations);
        }
        table.add("ideal", "", ideal, 1.0, 1.0, 0, 0.0, 0.0, cpuSeconds(), 0.0);
        table.print(System.out);
        table.write(out, "provisioning");
        System.out.println("wrote " + out.resolve("provisioning.csv") + " and provisioning.json");
        return 0;
    }

    /** Stage by stage on maxNodes machines: each stage takes ceil(tasks / machines) task lengths. */
    double idealSeconds() {
        double t = 0;
        for (int s = 1; s <= stages; s++) {
            t += Math.ceil(STAGE_TASKS[s - 1] / (double) (maxNodes * slots)) * paperSeconds(s);
        }
        return t;
    }

    double cpuSeconds() {
        double t = 0;
        for (int s = 1; s <= stages; s++) {
            t += STAGE_TASKS[s - 1] * paperSeconds(s);
        }
        return t;
    }

    /** Between configurations: the previous one's jobs must have left the nodes. */
    private static void waitForSlurmToEmpty() throws Exception {
        Shell sh = new Shell();
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (!sh.check(List.of("squeue", "-h")).isBlank() && System.nanoTime() < deadline) {
            Thread.sleep(200); // polling the scheduler's queue, there is no event to wait for
        }
    }

    /**
     * Registered executor-seconds, sampled from the dispatcher's status every 50 ms (for executors
     * that are processes elsewhere, whose lifetimes this JVM cannot see).
     */
    private static final class ExecutorSeconds implements AutoCloseable {
        private final Thread thread;
        private volatile double seconds;
        private volatile boolean stop;

        ExecutorSeconds(Dispatcher d) {
            thread = new Thread(() -> {
                long last = System.nanoTime();
                while (!stop) {
                    try {
                        int n = new ObjectMapper().readTree(d.status())
                                .at("/executors/registered").asInt();
                        long now = System.nanoTime();
                        seconds += n * (now - last) / 1e9;
                        last = now;
                        Thread.sleep(50); // the sampling period
                    } catch (Exception e) {
                        return;
                    }
                }
            }, "executor-seconds");
            thread.setDaemon(true);
            thread.start();
        }

        void reset() {
            seconds = 0;
        }

        double seconds() {
            return seconds;
        }

        @Override
        public void close() {
            stop = true;
        }
    }

    private record Row(double seconds, double used, double wasted, int allocations, double avgQueue, double avgExec) {
    }

    /** One configuration; times in benchmark seconds. {@code idlePaperSeconds} < 0: hold every node throughout. */
    private Row run(double idlePaperSeconds) throws Exception {
        boolean hold = idlePaperSeconds < 0;
        Path work = Files.createTempDirectory("falkon-provisioning");
        boolean slurm = switch (lrm) {
            case "slurm" -> true;
            case "in-process" -> false;
            default -> throw new IllegalArgumentException("--lrm must be in-process or slurm");
        };
        try (Dispatcher d = Dispatcher.start(DispatcherConfig.local());
             LocalAdapter local = new LocalAdapter(Duration.ofMillis(Math.round(latency / scale * 1000)),
                     new InProcessNodes(d.port(), d.token()));
             ExecutorSeconds sampler = new ExecutorSeconds(d)) {
            LrmAdapter adapter = slurm ? new SlurmAdapter(new Shell()) : local;
            InProcessNodes nodes = (InProcessNodes) local.launcher();
            List<String> executor = new ArrayList<>(LocalExecutors.javaCommand());
            executor.addAll(List.of("--dispatcher", "127.0.0.1:" + d.port()));
            ReleasePolicy release = hold ? ReleasePolicy.distributed(Duration.ZERO)
                    : ReleasePolicy.distributed(Duration.ofMillis(Math.round(idlePaperSeconds / scale * 1000)));
            Provisioner.Config config = new Provisioner.Config(new Planner.Bounds(hold ? maxNodes : 0, maxNodes, maxNodes,
                    slots, 3600, 60 / scale), AcquisitionPolicy.byName(acquisition), release, executor,
                    Duration.ofMillis(Math.max(10, Math.round(1000 / scale))), work, "p", d.token());
            try (Provisioner p = Provisioner.start(config, adapter, d::status);
                 FalkonClient client = FalkonClient.connect("127.0.0.1:" + d.port(),
                         ClientOptions.defaults().withToken(d.token()))) {
                int before = 0;
                if (hold) {
                    d.awaitExecutors(maxNodes, Duration.ofMinutes(2)); // Falkon-∞: provisioned before the clock starts
                    sampler.reset();
                    before = p.allocations().size();
                }
                long t0 = System.nanoTime();
                double used = 0;
                double queued = 0;
                double exec = 0;
                int n = 0;
                try (Instance in = client.createInstance("18-stage")) {
                    for (int s = 1; s <= stages; s++) {
                        String len = String.format("%.3f", paperSeconds(s) / scale);
                        List<TaskSpec> tasks = new ArrayList<>();
                        for (int i = 0; i < STAGE_TASKS[s - 1]; i++) {
                            tasks.add(TaskSpec.of("/bin/sleep", len));
                        }
                        List<CompletableFuture<TaskResult>> fs = in.submit(tasks);
                        in.awaitAll();
                        for (CompletableFuture<TaskResult> f : fs) {
                            TaskResult r = f.join();
                            if (!r.succeeded()) {
                                throw new IllegalStateException("a benchmark task failed: " + r);
                            }
                            double e = (r.execution().finishedMicros() - r.execution().startedMicros()) / 1e6;
                            used += e;
                            exec += e;
                            queued += (r.dispatchedMicros() - r.submittedMicros()) / 1e6;
                            n++;
                        }
                    }
                }
                double seconds = (System.nanoTime() - t0) / 1e9;
                int allocations = p.allocations().size() - before;
                double sampled = sampler.seconds() * slots; // slot-seconds registered until the end
                closeEarly(p, local); // releases what is left; executor-seconds stop counting
                double registered = slurm ? sampled : nodes.registeredSeconds() * slots;
                double wasted = Math.max(0, registered - used);
                return new Row(seconds, used, wasted, allocations, queued / n, exec / n);
            }
        } finally {
            if (slurm) {
                waitForSlurmToEmpty();
            }
            try (var files = Files.walk(work)) {
                files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }

    /** Closes resources before their try block ends (closing is idempotent: the block closes them again). */
    private static void closeEarly(AutoCloseable... resources) throws Exception {
        for (AutoCloseable r : resources) {
            r.close();
        }
    }
}
