package io.falkon.dispatcher.status;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.falkon.dispatcher.core.StatusRenderer;
import io.falkon.dispatcher.core.StatusSnapshot;
import io.falkon.protocol.LogSafe;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Renders the status document (docs/protocol.md section 7) from a {@link StatusSnapshot} as JSON
 * (a Jackson tree), on the scheduler thread for a client's {@code STATUS} and on the sampler's for
 * the dashboard and {@code Dispatcher.status()}. What is not the scheduler's own state — the JVM's memory readings and the sections other components add
 * (the provisioner's allocations) — is sampled by {@link #refresh()}, which its owner calls from its
 * own thread: the scheduler thread never waits on JMX or on another component.
 */
public final class StatusReporter implements StatusRenderer {
    /** Made with the first status document, not with every dispatcher (a short falkon run may never need one). */
    private static final class Json {
        static final ObjectMapper JSON = new ObjectMapper();
    }


    private final Map<String, Supplier<String>> suppliers = new ConcurrentHashMap<>();
    private volatile Map<String, String> sections = Map.of();
    /**
     * Heap in use after the last collection, as of the last {@link #refresh()}: read through JMX,
     * whose set-up is a few percent of a short run's start, so not on the scheduler thread and not
     * before the first refresh (0 until then, as it is in a JVM that has not collected yet).
     */
    private volatile long liveAfterLastGc;

    /** Adds a section {@code name}, read from {@code json} at each {@link #refresh()}. */
    public void section(String name, Supplier<String> json) {
        suppliers.put(name, json);
    }

    /** Samples the JVM and every section (call from a thread other than the scheduler's). */
    public void refresh() {
        liveAfterLastGc = liveAfterGc();
        Map<String, String> fresh = new LinkedHashMap<>();
        suppliers.forEach((name, supplier) -> {
            try {
                fresh.put(name, supplier.get());
            } catch (RuntimeException e) {
                fresh.put(name, null);
            }
        });
        sections = fresh;
    }

    /** Heap in use right after the last collection of each pool: an estimate of live data. */
    private static long liveAfterGc() {
        long sum = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP && pool.getCollectionUsage() != null) {
                sum += pool.getCollectionUsage().getUsed();
            }
        }
        return sum;
    }

    /** The dispatcher-wide document. */
    @Override
    public String dispatcher(StatusSnapshot s) {
        ObjectNode o = Json.JSON.createObjectNode();
        o.put("dispatcherId", s.dispatcherId());
        o.put("uptimeSeconds", s.uptimeSeconds());
        o.put("policy", s.policy());
        o.put("queued", s.queued());
        o.put("waiting", s.waiting());
        o.put("held", s.held());
        o.put("running", s.running());
        o.put("completed", s.completed());
        o.put("failed", s.completed() - s.succeeded() - s.cancelled());
        o.put("cancelled", s.cancelled());
        o.put("retried", s.retried());
        o.put("instances", s.instances());
        o.put("detachedInstances", s.detachedInstances());
        ObjectNode ex = o.putObject("executors");
        ex.put("registered", s.executorsRegistered());
        ex.put("suspended", s.executorsSuspended());
        ex.put("slots", s.slots());
        ex.put("busySlots", s.running());
        ex.put("memoryMiB", s.resources().executorMemoryMiB());
        ex.put("gpus", s.resources().executorGpus());
        ObjectNode res = o.putObject("resources");
        res.put("queuedCores", s.resources().queuedCores());
        res.put("queuedMemoryMiB", s.resources().queuedMemoryMiB());
        res.put("runningCores", s.resources().runningCores());
        res.put("runningMemoryMiB", s.resources().runningMemoryMiB());
        res.put("queuedGpus", s.resources().queuedGpus());
        res.put("runningGpus", s.resources().runningGpus());
        ObjectNode dd = o.putObject("data");
        dd.put("localHits", s.data().localHits());
        dd.put("peerHits", s.data().peerHits());
        dd.put("misses", s.data().misses());
        dd.put("bytesLocal", s.data().bytesLocal());
        dd.put("bytesPeer", s.data().bytesPeer());
        dd.put("bytesStore", s.data().bytesStore());
        dd.put("bytesWritten", s.data().bytesWritten());
        dd.put("indexedObjects", s.indexedObjects());
        if (s.window() > 0) {
            dd.put("window", s.window());
        }
        ObjectNode mem = o.putObject("memory");
        mem.put("queuedBytes", s.queuedBytes());
        mem.put("runningBytes", s.runningBytes());
        mem.put("retainedResultBytes", s.retainedResultBytes());
        mem.put("spilledResultBytes", s.spilledResultBytes());
        mem.put("budgetBytes", s.budgetBytes());
        mem.put("refusingBundles", s.refusingBundles());
        mem.put("holdingDispatch", s.holdingDispatch());
        mem.put("refusedBundles", s.refusedBundles());
        ObjectNode j = o.putObject("jvm");
        Runtime rt = Runtime.getRuntime(); // read when rendered: these cost nothing
        j.put("heapUsedBytes", rt.totalMemory() - rt.freeMemory());
        j.put("heapMaxBytes", rt.maxMemory());
        j.put("heapLiveAfterLastGcBytes", liveAfterLastGc);
        ArrayNode list = o.putArray("executorList");
        for (StatusSnapshot.ExecutorRow e : s.executors()) {
            ObjectNode x = list.addObject();
            x.put("id", LogSafe.text(e.id()));
            x.put("host", LogSafe.text(e.host()));
            x.put("impl", LogSafe.text(e.impl()));
            x.put("slots", e.slots());
            if (e.memoryMiB() >= 0) {
                x.put("memoryMiB", e.memoryMiB());
            }
            if (e.diskMiB() >= 0) {
                x.put("diskMiB", e.diskMiB());
            }
            if (!e.resources().isEmpty()) {
                ObjectNode r = x.putObject("resources");
                e.resources().forEach((name, v) -> r.putObject(name).put("offered", v[0]).put("inUse", v[1]));
            }
            x.put("running", e.running());
            x.put("credits", e.credits());
            x.put("completed", e.completed());
            x.put("failures", e.failures());
            x.put("state", e.suspended() ? "suspended" : "active");
            if (e.suspended()) {
                x.put("suspendedSeconds", e.suspendedSeconds());
            }
            x.put("suspensions", e.suspensions());
            x.put("noExec", e.noExec());
            x.put("cachedObjects", e.cachedObjects());
            x.put("connectedSeconds", e.connectedSeconds());
        }
        ArrayNode instanceList = o.putArray("instanceList");
        for (StatusSnapshot.InstanceRow in : s.instanceList()) {
            instanceList.add(instanceNode(in));
        }
        for (Map.Entry<String, String> section : sections.entrySet()) {
            try {
                o.set(section.getKey(), Json.JSON.readTree(section.getValue()));
            } catch (IOException | RuntimeException failure) {
                o.put(section.getKey(), "unavailable");
            }
        }
        return o.toString();
    }

    /** One instance's document. */
    @Override
    public String instance(StatusSnapshot.InstanceRow in) {
        return instanceNode(in).toString();
    }

    private static ObjectNode instanceNode(StatusSnapshot.InstanceRow in) {
        ObjectNode o = Json.JSON.createObjectNode();
        o.put("instance", Long.toUnsignedString(in.id(), 16));
        o.put("name", LogSafe.text(in.name()));
        o.put("queued", in.queued());
        o.put("waiting", in.waiting());
        o.put("running", in.running());
        o.put("completed", in.completed());
        o.put("succeeded", in.succeeded());
        o.put("failed", in.completed() - in.succeeded() - in.cancelled());
        o.put("cancelled", in.cancelled());
        o.put("unacknowledged", in.unacknowledged());
        o.put("leaseSeconds", in.leaseSeconds());
        if (in.leaseLeftSeconds() >= 0) {
            o.put("leaseLeftSeconds", Math.round(in.leaseLeftSeconds() * 10) / 10.0);
        }
        o.put("created", Instant.ofEpochSecond(in.createdMicros() / 1_000_000, in.createdMicros() % 1_000_000 * 1000)
                .truncatedTo(ChronoUnit.SECONDS).toString());
        o.put("highestTaskId", in.highestTaskId());
        o.put("lastSeq", in.lastSeq());
        o.put("attached", in.attached());
        return o;
    }
}
