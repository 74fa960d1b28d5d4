package io.falkon.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import io.falkon.datacache.fetch.TokenBucket;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.dispatcher.policy.DispatchPolicies;
import io.falkon.protocol.DataStats;
import io.falkon.protocol.TaskInput;
import io.falkon.protocol.TaskSpec;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * What the data-diffusion workloads share: a shared store directory of random objects read through
 * an emulated bandwidth cap ({@link TokenBucket}: a saturated shared file system, which cannot be had
 * on one machine), a fresh local cluster per run (in-JVM executors with real caches and peer servers,
 * real processes for tasks), and the figures of a run.
 */
final class DataWorkload implements AutoCloseable {
    final Path store;
    final int objects;
    final long objectSize;

    DataWorkload(int objects, long objectSize, long seed) throws IOException {
        this.store = Files.createTempDirectory("falkon-store-");
        this.objects = objects;
        this.objectSize = objectSize;
        Random rnd = new Random(seed);
        byte[] buf = new byte[(int) Math.min(objectSize, 1 << 20)];
        for (int i = 0; i < objects; i++) {
            try (var out = Files.newOutputStream(store.resolve(name(i)))) {
                for (long left = objectSize; left > 0; left -= buf.length) {
                    rnd.nextBytes(buf);
                    out.write(buf, 0, (int) Math.min(left, buf.length));
                }
            }
        }
    }

    static String name(int i) {
        return String.format("object-%05d.dat", i);
    }

    TaskInput input(int i, String as) {
        return new TaskInput(name(i), name(i), objectSize, "", TaskInput.AS_STORED, as);
    }

    /** A cluster of {@code executors} x {@code slots} with a cache of {@code cache} bytes each, the store capped. */
    LocalCluster cluster(String policy, int executors, int slots, long cache, TokenBucket cap) {
        return new LocalCluster(DispatcherConfig.local().withPolicy(DispatchPolicies.byName(policy)), executors, slots,
                false, false, 0, c -> c.toBuilder().cacheCapacity(cache).storeRoot(store).storeBandwidth(cap)
                .cacheHost("127.0.0.1").build());
    }

    /** What a run measured. */
    static final class Run {
        final AtomicLong completed = new AtomicLong();
        final AtomicLong failed = new AtomicLong();
        final AtomicLong responseMicros = new AtomicLong();
        final List<CompletableFuture<TaskResult>> futures = new ArrayList<>();
        DataStats data = DataStats.ZERO;
        long peakQueue;
        double seconds;

        synchronized void add(TaskResult r) {
            completed.incrementAndGet();
            if (!r.succeeded()) {
                failed.incrementAndGet();
            }
            responseMicros.addAndGet(r.deliveredMicros() - r.submittedMicros());
            data = data.plus(r.data());
        }

        double avgResponseMillis() {
            return completed.get() == 0 ? 0 : responseMicros.get() / 1000.0 / completed.get();
        }

        double pct(long part) {
            long all = data.accesses();
            return all == 0 ? 0 : 100.0 * part / all;
        }

        /** Bytes tasks got, from any source, per second of the run. */
        double readMiBps() {
            return (data.bytesLocal() + data.bytesPeer() + data.bytesStore()) / 1048576.0 / seconds;
        }
    }

    /** Watches the dispatcher's queue while a run goes on (for the peak queue length). */
    static Thread queueWatcher(LocalCluster cluster, Run run) {
        Thread t = new Thread(() -> {
            ObjectMapper json = new ObjectMapper();
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    long q = json.readTree(cluster.dispatcher().status()).get("queued").asLong();
                    run.peakQueue = Math.max(run.peakQueue, q);
                    Thread.sleep(250); // sampling period
                } catch (InterruptedException e) {
                    return;
                } catch (Exception e) {
                    return;
                }
            }
        }, "queue-watcher");
        t.setDaemon(true);
        t.start();
        return t;
    }

    static Instance instance(FalkonClient client, Run run) {
        Instance in = client.createInstance("data-workload");
        in.onResult(run::add);
        return in;
    }

    static TaskSpec task(List<TaskInput> inputs, double computeSeconds) {
        return TaskSpec.builder("/bin/sh", "-c", "cat " + String.join(" ", inputs.stream()
                        .map(TaskInput::fileName).toList()) + " > /dev/null; sleep " + computeSeconds)
                .inputs(inputs).build();
    }

    @Override
    public void close() throws IOException {
        try (Stream<Path> files = Files.walk(store)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
