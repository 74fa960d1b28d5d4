package io.falkon.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The benchmarks run and write what they claim, on tiny sizes. Correctness only: the figures
 * themselves are never asserted.
 */
class BenchmarkSmokeTest {
    @TempDir
    Path out;

    @Test
    void throughputWritesOneRowPerConfigurationPlusTheCLoop() throws Exception {
        int rc = new CommandLine(new BenchCommand()).execute("throughput", "--tasks", "2000", "--real-tasks", "200",
                "--bundles", "1,50", "--prefetch", "0,4", "--impls", "java,c", "--rounds", "1",
                "--no-executor-processes", "--out", out.toString());
        assertThat(rc).isZero();
        JsonNode doc = new ObjectMapper().readTree(out.resolve("throughput.json").toFile());
        JsonNode rows = doc.get("rows");
        // no-exec x 2 bundles, true x 2 executors x 2 prefetch x 2 bundles, the C loop
        assertThat(rows).hasSize(2 + 8 + 1);
        for (JsonNode r : rows) {
            assertThat(r.get("tasksPerSecond").asDouble()).as(r.toString()).isPositive();
            if (r.get("mode").asText().equals("true")) {
                assertThat(r.get("pctOfCLoop").asDouble()).as(r.toString()).isPositive();
            }
        }
        assertThat(rows.findValuesAsText("executor")).containsOnly("emulated", "java", "c", "");
        assertThat(doc.at("/meta/cores").asInt()).isPositive();
        assertThat(Files.readAllLines(out.resolve("throughput.csv"))).hasSize(1 + 11);
    }

    @Test
    void queueFillsAndDrainsADispatcherInItsOwnJvm() throws Exception {
        int rc = new CommandLine(new BenchCommand()).execute("queue", "--tasks", "20000", "--heap", "128m",
                "--out", out.toString());
        assertThat(rc).isZero();
        JsonNode row = new ObjectMapper().readTree(out.resolve("queue.json").toFile()).get("rows").get(0);
        assertThat(row.get("tasks").asInt()).isEqualTo(20000);
        assertThat(row.get("liveBytesPerQueuedTask").asDouble()).isPositive();
        assertThat(row.get("drainTasksPerSecond").asDouble()).isPositive();
    }

    @Test
    void wsMeasuresSequentialCallsAndEachBundleSize() throws Exception {
        int rc = new CommandLine(new BenchCommand()).execute("ws", "--bundles", "1,50", "--tasks", "500",
                "--small-tasks", "100", "--calls", "20", "--rounds", "1", "--out", out.toString());
        assertThat(rc).isZero();
        JsonNode rows = new ObjectMapper().readTree(out.resolve("ws.json").toFile()).get("rows");
        assertThat(rows.findValuesAsText("measure")).containsExactly("sequential Submit(1 task)",
                "sequential GetStatus", "end-to-end", "end-to-end");
        assertThat(rows.findValuesAsText("bundle")).containsExactly("1", "0", "1", "50");
        for (JsonNode r : rows) {
            assertThat(r.get("wsCallsPerSecond").asDouble()).as(r.toString()).isPositive();
        }
    }

    @Test
    void provisioningRunsTheFirstStagesForEachIdleTime() throws Exception {
        int rc = new CommandLine(new BenchCommand()).execute("provisioning", "--stages", "4", "--idle", "15,inf",
                "--max-nodes", "4", "--scale", "120", "--out", out.toString());
        assertThat(rc).isZero();
        JsonNode rows = new ObjectMapper().readTree(out.resolve("provisioning.json").toFile()).get("rows");
        assertThat(rows.findValuesAsText("config")).containsExactly("falkon-15", "falkon-inf", "ideal");
        for (JsonNode r : rows) {
            assertThat(r.get("resourceUtilization").asDouble()).as(r.toString()).isBetween(0.0, 1.0);
            assertThat(r.get("executionEfficiency").asDouble()).as(r.toString()).isPositive();
        }
        // stages 1-4 hold 15 tasks: the dynamic run asks for nodes at least once, the held pool never
        assertThat(rows.get(0).get("allocations").asInt()).isPositive();
        assertThat(rows.get(1).get("allocations").asInt()).isZero();
    }
}
