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
 * Falkon SC07 section 4.5: a very long queue. A dispatcher in its own JVM with a capped heap is
 * filled with N tasks while no executor is attached (submit rate, heap per queued task), then
 * no-exec executors attach and drain it (throughput with a long queue).
 */
@Command(name = "queue", mixinStandardHelpOptions = true,
        description = "Memory and throughput of a dispatcher holding millions of queued tasks.")
final class QueueBenchmark implements Callable<Integer> {

    @Option(names = "--tasks", description = "tasks to queue (default: ${DEFAULT-VALUE})")
    int tasks = 1_000_000;

    @Option(names = "--heap", description = "the dispatcher JVM's -Xmx (default: ${DEFAULT-VALUE})")
    String heap = "512m";

    @Option(names = "--bundle", description = "client bundle size (default: ${DEFAULT-VALUE})")
    int bundle = 1000;

    @Option(names = "--executors", description = "no-exec executors that drain the queue (default: ${DEFAULT-VALUE})")
    int executors = 2;

    @Option(names = "--slots", description = "slots per executor (default: ${DEFAULT-VALUE})")
    int slots = 1000;

    @Option(names = "--out", description = "directory for CSV and JSON (default: ${DEFAULT-VALUE})")
    Path out = Path.of("bench-results");

    @Override
    public Integer call() throws Exception {
        ResultTable table = new ResultTable("queue: " + tasks + " queued tasks in a dispatcher with -Xmx" + heap,
                List.of("tasks", "heap", "submitSeconds", "submitTasksPerSecond", "heapUsedMiB", "liveHeapMiB",
                        "liveBytesPerQueuedTask", "drainSeconds", "drainTasksPerSecond"));
        Machine.describe(table);
        ObjectMapper json = new ObjectMapper();
        // the whole queue must be accepted with no executor attached, so the backpressure budget
        // (default: half the heap) is raised to 90% of it: what is measured is what the heap holds
        long budgetMiB = Bytes.parse(heap) * 9 / 10 >> 20;
        try (DispatcherProcess d = new DispatcherProcess(List.of("-Xmx" + heap, "-XX:+UseParallelGC"),
                List.of("--max-memory", Long.toString(budgetMiB)));
             FalkonClient client = FalkonClient.connect(d.address(),
                     ClientOptions.defaults().withBundleSize(bundle).withMaxInFlight(tasks).withToken(d.token()));
             Instance instance = client.createInstance("queue")) {
            long empty = d.liveHeapBytes();
            long t0 = System.nanoTime();
            for (int i = 0; i < tasks; i++) {
                // distinct, realistic specs: a shell line naming its own input
                instance.submit(TaskSpec.shell("process-tile input/tile-" + i + ".fits"));
            }
            JsonNode status;
            do {
                status = json.readTree(instance.status());
            } while (status.get("queued").asLong() < tasks && pause());
            double submitSeconds = (System.nanoTime() - t0) / 1e9;
            long used = json.readTree(client.status()).at("/jvm/heapUsedBytes").asLong();
            long live = d.liveHeapBytes();
            System.err.printf("queued %,d tasks in %.1f s; heap used %,d MiB, live %,d MiB%n", tasks,
                    submitSeconds, used >> 20, live >> 20);

            List<Executor> drains = new ArrayList<>();
            long t1 = System.nanoTime();
            for (int i = 0; i < executors; i++) {
                drains.add(Executor.start(ExecutorConfig.of("127.0.0.1", d.port()).withId("drain-" + i)
                        .withSlots(slots).withNoExec(true).withToken(d.token())));
            }
            instance.awaitAll();
            double drainSeconds = (System.nanoTime() - t1) / 1e9;
            drains.forEach(Executor::close);
            table.add(tasks, heap, submitSeconds, tasks / submitSeconds, used / 1048576.0, live / 1048576.0,
                    (double) (live - empty) / tasks, drainSeconds, tasks / drainSeconds);
        }
        table.meta("note", "liveHeapMiB sums the live objects after a full GC (jcmd GC.class_histogram); "
                + "liveBytesPerQueuedTask is what the tasks add to the empty dispatcher's; heapUsedMiB includes garbage");
        table.print(System.out);
        table.write(out, "queue");
        return 0;
    }

    private static boolean pause() throws InterruptedException {
        TimeUnit.MILLISECONDS.sleep(200); // polling the dispatcher's status; there is no queue-full event
        return true;
    }
}
