package io.falkon.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.executor.Bytes;
import io.falkon.executor.Executor;
import io.falkon.executor.ExecutorConfig;
import io.falkon.protocol.TaskSpec;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * Issue 33's scale figure: a workflow of WIDTH x DEPTH tasks, each task of layer d after two tasks
 * of layer d-1, held by a dispatcher in its own JVM. It is submitted whole while no executor is
 * attached (layer 0 queued, every other task waiting), the live heap read after a full GC, then
 * no-exec executors attach and the dispatcher releases layer after layer as results arrive.
 *
 * <p>The same tasks, with the same names and no {@code after}, are run the same way first in a
 * dispatcher of their own: every task is queued, none waits. The two rows side by side give the
 * memory of a waiting task against a queued one, and the cost of dependency release against a
 * drain of independent tasks.
 */
@Command(name = "lattice", mixinStandardHelpOptions = true,
        description = "A WIDTH x DEPTH workflow (each task after two of the layer before): memory of waiting "
                + "tasks and the rate of dependency release, against the same tasks independent.")
final class LatticeBenchmark implements Callable<Integer> {

    @Option(names = "--width", description = "tasks per layer (default: ${DEFAULT-VALUE})")
    int width = 1000;

    @Option(names = "--depth", description = "layers (default: ${DEFAULT-VALUE})")
    int depth = 1000;

    @Option(names = "--heap", description = "the dispatcher JVM's -Xmx (default: ${DEFAULT-VALUE})")
    String heap = "1g";

    @Option(names = "--bundle", description = "client bundle size (default: ${DEFAULT-VALUE})")
    int bundle = 1000;

    @Option(names = "--executors", description = "no-exec executors (default: ${DEFAULT-VALUE})")
    int executors = 2;

    @Option(names = "--slots", description = "slots per executor (default: ${DEFAULT-VALUE})")
    int slots = 1000;

    @Option(names = "--out", description = "directory for CSV and JSON (default: ${DEFAULT-VALUE})")
    Path out = Path.of("bench-results");

    private final ObjectMapper json = new ObjectMapper();

    @Override
    public Integer call() throws Exception {
        long tasks = (long) width * depth;
        ResultTable table = new ResultTable("lattice: " + width + " x " + depth + " tasks, each after two of the "
                + "layer before, in a dispatcher with -Xmx" + heap,
                List.of("form", "tasks", "submitSeconds", "waiting", "liveHeapMiB", "bytesPerTask",
                        "runSeconds", "tasksPerSecond", "releasesPerSecond"));
        Machine.describe(table);
        table.meta("width", width);
        table.meta("depth", depth);
        double[] independent = run(false, table);
        double[] lattice = run(true, table);
        System.err.printf("a waiting task holds %.2fx the heap of a queued one; the lattice runs at %.0f%% of the "
                + "independent tasks' rate%n", lattice[0] / independent[0], 100 * lattice[1] / independent[1]);
        table.meta("note", "bytesPerTask = (live heap with the tasks held - the same dispatcher's live heap "
                + "before any task) / tasks, each summed by jcmd GC.class_histogram after a full GC; releasesPerSecond counts the tasks of layers 1.."
                + "DEPTH-1, each released by its producers' results");
        table.print(System.out);
        table.write(out, "lattice");
        return 0;
    }

    /** One dispatcher, the whole file submitted, then drained; returns {bytes per task, tasks per second}. */
    private double[] run(boolean dependent, ResultTable table) throws Exception {
        long tasks = (long) width * depth;
        long budgetMiB = Bytes.parse(heap) * 9 / 10 >> 20; // as QueueBenchmark: the whole file must be accepted
        try (DispatcherProcess d = new DispatcherProcess(List.of("-Xmx" + heap, "-XX:+UseParallelGC"),
                List.of("--max-memory", Long.toString(budgetMiB)));
             FalkonClient client = FalkonClient.connect(d.address(), ClientOptions.defaults().withBundleSize(bundle)
                     .withMaxInFlight((int) Math.min(Integer.MAX_VALUE, Math.max(tasks, bundle))).withToken(d.token()));
             Instance instance = client.createInstance(dependent ? "lattice" : "independent")) {
            long empty = d.liveHeapBytes();
            long t0 = System.nanoTime();
            for (int layer = 0; layer < depth; layer++) {
                for (int i = 0; i < width; i++) {
                    TaskSpec.Builder b = TaskSpec.builder("/bin/true").name(name(layer, i));
                    if (dependent && layer > 0) {
                        b.after(name(layer - 1, i), name(layer - 1, (i + 1) % width));
                    }
                    instance.submit(b.build());
                }
            }
            JsonNode status;
            do {
                status = json.readTree(instance.status());
            } while (status.get("queued").asLong() + status.path("waiting").asLong() < tasks && pause());
            double submitSeconds = (System.nanoTime() - t0) / 1e9;
            long waiting = status.path("waiting").asLong();
            long live = d.liveHeapBytes();
            double perTask = (double) (live - empty) / tasks;
            System.err.printf("%s: %,d tasks held (%,d waiting) in %.1f s; %.0f bytes of live heap each%n",
                    dependent ? "lattice" : "independent", tasks, waiting, submitSeconds, perTask);

            List<Executor> drains = new ArrayList<>();
            long t1 = System.nanoTime();
            for (int i = 0; i < executors; i++) {
                drains.add(Executor.start(ExecutorConfig.of("127.0.0.1", d.port()).withId("drain-" + i)
                        .withSlots(slots).withNoExec(true).withToken(d.token())));
            }
            instance.awaitAll();
            double runSeconds = (System.nanoTime() - t1) / 1e9;
            drains.forEach(Executor::close);
            JsonNode done = json.readTree(instance.status());
            if (done.path("succeeded").asLong(-1) != tasks) {
                throw new IllegalStateException("not every task succeeded: " + done);
            }
            long released = dependent ? tasks - width : 0;
            table.add(dependent ? "lattice" : "independent", tasks, submitSeconds, waiting, live / 1048576.0, perTask,
                    runSeconds, tasks / runSeconds, released / runSeconds);
            return new double[] {perTask, tasks / runSeconds};
        }
    }

    private static String name(int layer, int i) {
        return layer + "." + i;
    }

    private static boolean pause() throws InterruptedException {
        TimeUnit.MILLISECONDS.sleep(200); // polling the dispatcher's status; there is no "all accepted" event
        return true;
    }
}
