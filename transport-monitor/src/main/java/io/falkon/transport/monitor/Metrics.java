package io.falkon.transport.monitor;

import io.falkon.dispatcher.core.LatencyHistogram;
import io.falkon.dispatcher.core.StatusSnapshot;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.function.Supplier;

/**
 * The dispatcher's metrics in the Prometheus text format: Falkon's own, read from the latest
 * {@link StatusSnapshot} (taken on the scheduler thread, never read from its live state), plus the
 * JVM's (memory, GC, threads, classes) from the Prometheus Java client. One registry per
 * dispatcher, so that several dispatchers in one JVM (tests) never share counters.
 */
public final class Metrics {
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();

    /** @param latest the most recent snapshot (null until the first one is taken) */
    public Metrics(Supplier<StatusSnapshot> latest) {
        JvmMetrics.builder().register(registry);
        registry.register((MultiCollector) () -> {
            StatusSnapshot s = latest.get();
            return s == null ? MetricSnapshots.of() : falkon(s);
        });
    }

    /** The scrape: every metric, in the text format. */
    public byte[] scrape() {
        ByteArrayOutputStream out = new ByteArrayOutputStream(16 * 1024);
        try {
            writer.write(out, registry.scrape());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    public String contentType() {
        return writer.getContentType();
    }

    static MetricSnapshots falkon(StatusSnapshot s) {
        int busy = 0;
        for (StatusSnapshot.ExecutorRow e : s.executors()) {
            if (e.running() > 0) {
                busy++;
            }
        }
        return MetricSnapshots.of(
                counter("falkon_tasks_completed", "Tasks whose final result was delivered", s.completed()),
                counter("falkon_tasks_failed", "Tasks whose final result was neither success (exit 0) nor a "
                        + "cancellation", s.completed() - s.succeeded() - s.cancelled()),
                counter("falkon_tasks_cancelled", "Tasks cancelled with their instance before they finished",
                        s.cancelled()),
                counter("falkon_tasks_retried", "Re-dispatches after framework failures", s.retried()),
                gauge("falkon_tasks_queued", "Tasks waiting for an executor", s.queued()),
                gauge("falkon_tasks_waiting", "Tasks waiting for what other tasks produce (dependencies), apart "
                        + "from the queue", s.waiting()),
                gauge("falkon_tasks_running", "Tasks dispatched and not yet finished", s.running()),
                gauge("falkon_executors_registered", "Executors connected", s.executorsRegistered()),
                gauge("falkon_executors_busy", "Executors running at least one task", busy),
                gauge("falkon_executors_suspended", "Executors suspended after repeated failures",
                        s.executorsSuspended()),
                gauge("falkon_slots", "Task slots of the registered executors", s.slots()),
                gauge("falkon_instances", "Client instances", s.instances()),
                gauge("falkon_memory_held_bytes", "Bytes the memory budget counts (queued, running, results kept)",
                        s.queuedBytes() + s.runningBytes() + s.retainedResultBytes()),
                gauge("falkon_memory_budget_bytes", "The memory budget (--max-memory)", s.budgetBytes()),
                counter("falkon_bundles_refused", "SUBMIT bundles answered BUSY (over the memory budget)",
                        s.refusedBundles()),
                CounterSnapshot.builder().name("falkon_cache_hits").help("Task inputs by where they came from: "
                                + "local (this executor's cache), peer (another executor's), store (a miss)")
                        .dataPoint(labelled("kind", "local", s.data().localHits()))
                        .dataPoint(labelled("kind", "peer", s.data().peerHits()))
                        .dataPoint(labelled("kind", "store", s.data().misses())).build(),
                CounterSnapshot.builder().name("falkon_cache_read_bytes").help("Input bytes by where they came from")
                        .dataPoint(labelled("kind", "local", s.data().bytesLocal()))
                        .dataPoint(labelled("kind", "peer", s.data().bytesPeer()))
                        .dataPoint(labelled("kind", "store", s.data().bytesStore())).build(),
                counter("falkon_store_written_bytes", "Bytes of tasks' declared outputs written to the shared store",
                        s.data().bytesWritten()),
                histogram("falkon_dispatch_latency_seconds",
                        "From a task's acceptance to its first dispatch to an executor", s.dispatchLatency()));
    }

    private static CounterSnapshot counter(String name, String help, double value) {
        return CounterSnapshot.builder().name(name).help(help)
                .dataPoint(CounterDataPointSnapshot.builder().value(value).build()).build();
    }

    private static CounterDataPointSnapshot labelled(String label, String value, double v) {
        return CounterDataPointSnapshot.builder().labels(Labels.of(label, value)).value(v).build();
    }

    private static GaugeSnapshot gauge(String name, String help, double value) {
        return GaugeSnapshot.builder().name(name).help(help)
                .dataPoint(GaugeDataPointSnapshot.builder().value(value).build()).build();
    }

    private static HistogramSnapshot histogram(String name, String help, LatencyHistogram.Snapshot h) {
        double[] bounds = new double[LatencyHistogram.BOUNDS.length + 1];
        System.arraycopy(LatencyHistogram.BOUNDS, 0, bounds, 0, LatencyHistogram.BOUNDS.length);
        bounds[bounds.length - 1] = Double.POSITIVE_INFINITY;
        return HistogramSnapshot.builder().name(name).help(help)
                .dataPoint(HistogramDataPointSnapshot.builder()
                        .classicHistogramBuckets(ClassicHistogramBuckets.of(bounds, h.counts()))
                        .sum(h.sumSeconds()).build()).build();
    }
}
