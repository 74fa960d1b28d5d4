package io.falkon.dispatcher.status;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.dispatcher.core.LatencyHistogram;
import io.falkon.dispatcher.core.StatusSnapshot;
import io.falkon.protocol.DataStats;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The status document's JSON (docs/protocol.md section 7) as the dispatcher writes it from a snapshot. */
class StatusReporterTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final StatusReporter reporter = new StatusReporter();

    private static StatusSnapshot.InstanceRow row(String name, double leaseLeft) {
        return new StatusSnapshot.InstanceRow(0xabcL, name, 2, 1, 4, 10, 7, 1, 3, 60, leaseLeft,
                1_700_000_000_123_456L, 19, 10, leaseLeft < 0);
    }

    private static StatusSnapshot snapshot() {
        List<StatusSnapshot.ExecutorRow> executors = List.of(
                new StatusSnapshot.ExecutorRow("e1", "node1", "c", 4, 3, 1, 50, 0, false, 0, 0, false, 12, 9.5, 8192,
                        40960),
                new StatusSnapshot.ExecutorRow("e2\u001b[31m", "node2", "java", 2, 0, 0, 5, 5, true, 30, 1, false, 0,
                        3, -1, -1));
        return new StatusSnapshot("d-1", 2.5, "first-available", 2, 1, 0, 3, 20, 15, 2, 4, 1, 0, 2, 1, 6,
                new DataStats(1, 2, 3, 4, 5, 6, 0, 7), 12, 0, 100, 200, 300, 0, 1 << 20, false, false, 7,
                LatencyHistogram.Snapshot.EMPTY, executors, List.of(row("mine", -1)),
                new StatusSnapshot.Resources(5, 1024, 4, 512, 8192));
    }

    @Test
    void theDispatcherDocumentHasTheCountsOfTheSnapshot() throws Exception {
        JsonNode st = JSON.readTree(reporter.dispatcher(snapshot()));
        assertThat(st.get("dispatcherId").asText()).isEqualTo("d-1");
        assertThat(st.get("uptimeSeconds").asDouble()).isEqualTo(2.5);
        assertThat(st.get("queued").asInt()).isEqualTo(2);
        assertThat(st.get("failed").asLong()).isEqualTo(20 - 15 - 2);
        assertThat(st.at("/executors/registered").asInt()).isEqualTo(2);
        assertThat(st.at("/executors/busySlots").asInt()).isEqualTo(3);
        assertThat(st.at("/data/bytesStore").asLong()).isEqualTo(6);
        assertThat(st.at("/data/bytesWritten").asLong()).isEqualTo(7);
        assertThat(st.at("/data/indexedObjects").asInt()).isEqualTo(12);
        assertThat(st.at("/data").has("window")).as("no window for a policy without one").isFalse();
        assertThat(st.at("/memory/refusedBundles").asLong()).isEqualTo(7);
        assertThat(st.at("/resources/queuedCores").asLong()).isEqualTo(5);
        assertThat(st.at("/resources/queuedMemoryMiB").asLong()).isEqualTo(1024);
        assertThat(st.at("/resources/runningCores").asLong()).isEqualTo(4);
        assertThat(st.at("/resources/runningMemoryMiB").asLong()).isEqualTo(512);
        assertThat(st.at("/executors/memoryMiB").asLong()).isEqualTo(8192);
        assertThat(st.at("/executorList/0/memoryMiB").asLong()).isEqualTo(8192);
        assertThat(st.at("/executorList/1").has("memoryMiB")).as("advertises none").isFalse();
        assertThat(st.at("/executorList/0/diskMiB").asLong()).isEqualTo(40960);
        assertThat(st.at("/executorList/1").has("diskMiB")).as("advertises none").isFalse();
        assertThat(st.at("/instanceList/0/name").asText()).isEqualTo("mine");
    }

    @Test
    void anExecutorShowsItsSuspensionOnlyWhileSuspendedAndItsNamesEscaped() throws Exception {
        JsonNode list = JSON.readTree(reporter.dispatcher(snapshot())).get("executorList");
        assertThat(list.get(0).get("state").asText()).isEqualTo("active");
        assertThat(list.get(0).has("suspendedSeconds")).isFalse();
        assertThat(list.get(1).get("state").asText()).isEqualTo("suspended");
        assertThat(list.get(1).get("suspendedSeconds").asDouble()).isEqualTo(30);
        assertThat(list.get(1).get("id").asText()).doesNotContain("\u001b");
    }

    @Test
    void anInstanceDocumentShowsItsLeaseOnlyWhileDetached() throws Exception {
        JsonNode attached = JSON.readTree(reporter.instance(row("a", -1)));
        assertThat(attached.get("instance").asText()).isEqualTo("abc");
        assertThat(attached.get("failed").asLong()).isEqualTo(10 - 7 - 1);
        assertThat(attached.has("leaseLeftSeconds")).isFalse();
        assertThat(attached.get("created").asText()).isEqualTo("2023-11-14T22:13:20Z");
        JsonNode detached = JSON.readTree(reporter.instance(row("b", 12.345)));
        assertThat(detached.get("leaseLeftSeconds").asDouble()).isEqualTo(12.3);
        assertThat(detached.get("attached").asBoolean()).isFalse();
    }

    @Test
    void sectionsAppearAfterARefreshAndABrokenOneIsMarkedUnavailable() throws Exception {
        reporter.section("provisioner", () -> "{\"allocations\":2}");
        reporter.section("broken", () -> {
            throw new IllegalStateException("down");
        });
        reporter.section("garbled", () -> "{not json");
        assertThat(JSON.readTree(reporter.dispatcher(snapshot())).has("provisioner")).as("before a refresh").isFalse();
        reporter.refresh();
        JsonNode st = JSON.readTree(reporter.dispatcher(snapshot()));
        assertThat(st.at("/provisioner/allocations").asInt()).isEqualTo(2);
        assertThat(st.get("broken").asText()).isEqualTo("unavailable");
        assertThat(st.get("garbled").asText()).isEqualTo("unavailable");
        assertThat(st.at("/jvm/heapMaxBytes").asLong()).isPositive();
    }
}
