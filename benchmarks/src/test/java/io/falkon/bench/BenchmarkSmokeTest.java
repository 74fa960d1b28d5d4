package io.falkon.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.executor.LocalExecutors;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.HashMap;
import java.util.Map;
import javax.imageio.ImageIO;
import org.assertj.core.api.Assertions;

/**
 * The benchmarks run and write what they claim, on tiny sizes. Correctness only: the figures
 * themselves are never asserted. Two run at a time (each its own cluster and directory): the figures
 * of one are not the other's business.
 */
@Execution(ExecutionMode.CONCURRENT)
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

    @Test
    void throughputSweepsExecutorCounts() throws Exception {
        int rc = new CommandLine(new BenchCommand()).execute("throughput", "--modes", "no-exec", "--tasks", "3000",
                "--executors", "1,4", "--slots", "1", "--bundles", "100", "--out", out.toString());
        assertThat(rc).isZero();
        JsonNode rows = rows("throughput");
        assertThat(rows.findValuesAsText("executors")).containsExactly("1", "4");
        assertThat(rows.findValuesAsText("slots")).containsOnly("1");
        assertReportPlots("throughput.png");
    }

    @Test
    void bundlingSweepsBundleSizesOverBothTransports() throws Exception {
        int rc = new CommandLine(new BenchCommand()).execute("bundling", "--bundles", "1,10", "--rounds", "1",
                "--seconds", "0.2", "--min-tasks", "200", "--out", out.toString());
        assertThat(rc).isZero();
        JsonNode rows = rows("bundling");
        assertThat(rows.findValuesAsText("transport")).containsExactly("tcp", "tcp", "ws", "ws");
        for (JsonNode r : rows) {
            double tps = r.get("tasksPerSecond").asDouble();
            assertThat(tps).as(r.toString()).isPositive();
            assertThat(r.get("msPerTask").asDouble()).isCloseTo(1000 / tps, Assertions.within(1e-6));
            assertThat(r.get("tasks").asInt()).isGreaterThanOrEqualTo(200);
        }
        assertReportPlots("bundling.png", "bundling-2.png");
    }

    @Test
    void efficiencyRunsRealSleepsForEachLengthAndExecutorCount() throws Exception {
        int rc = new CommandLine(new BenchCommand()).execute("efficiency", "--executors", "1,4", "--lengths",
                "0.01,0.3", "--tasks-per-executor", "2", "--out", out.toString());
        assertThat(rc).isZero();
        JsonNode rows = rows("efficiency");
        assertThat(rows).hasSize(4);
        for (JsonNode r : rows) {
            // a real sleep cannot finish before its ideal time: efficiency is at most 1
            assertThat(r.get("efficiency").asDouble()).as(r.toString()).isBetween(0.0, 1.0);
            assertThat(r.get("seconds").asDouble()).isGreaterThanOrEqualTo(r.get("idealSeconds").asDouble());
            assertThat(r.get("tasks").asInt()).isEqualTo(2 * r.get("executors").asInt());
        }
        assertReportPlots("efficiency.png");
    }

    @Test
    void scaleRegistersEmulatedExecutorsInAnotherJvmAndRecordsOverheads() throws Exception {
        int rc = new CommandLine(new BenchCommand()).execute("scale", "--executors", "200", "--jvms", "1",
                "--tasks-per-executor", "3", "--out", out.toString());
        assertThat(rc).isZero();
        JsonNode row = rows("scale").get(0);
        assertThat(row.get("executors").asInt()).isEqualTo(200);
        assertThat(row.get("tasks").asInt()).isEqualTo(600);
        assertThat(row.get("overheadP50ms").asDouble()).isLessThanOrEqualTo(row.get("overheadMaxMs").asDouble());
        assertPercentileCurves("scale-overhead", 2);
        assertReportPlots("scale.png");
    }

    @Test
    void latencyMeasuresOneTaskAtATime() throws Exception {
        int rc = new CommandLine(new BenchCommand()).execute("latency", "--tasks", "200", "--impls", "java",
                "--out", out.toString());
        assertThat(rc).isZero();
        JsonNode rows = rows("latency");
        assertThat(rows.findValuesAsText("mode")).containsExactly("no-exec", "true");
        for (JsonNode r : rows) {
            assertThat(r.get("p50ms").asDouble()).as(r.toString()).isPositive()
                    .isLessThanOrEqualTo(r.get("p99ms").asDouble());
            assertThat(r.get("p999ms").asDouble()).isLessThanOrEqualTo(r.get("maxMs").asDouble());
        }
        assertPercentileCurves("latency-percentiles", 2);
        assertReportPlots("latency.png");
    }

    @Test
    void enduranceRunsEveryTaskAndSamplesEverySecond() throws Exception {
        // three seconds, or 400,000 tasks if they are done sooner: submitting stops at the first
        // 65,536th task past the time limit
        int rc = new CommandLine(new BenchCommand()).execute("endurance", "--tasks", "400000", "--minutes", "0.05",
                "--out", out.toString());
        assertThat(rc).isZero();
        JsonNode row = rows("endurance").get(0);
        long tasks = row.get("tasks").asLong();
        assertThat(tasks == 400_000 || (tasks > 0 && tasks % 65_536 == 0)).as("tasks run: " + tasks).isTrue();
        assertThat(row.get("liveHeapEndMiB").asDouble()).isPositive();
        assertThat(rows("endurance-samples")).as("one-second samples").isNotEmpty();
        long last = 0;
        for (JsonNode s : rows("endurance-samples")) {
            assertThat(s.get("completed").asLong()).isGreaterThanOrEqualTo(last).isLessThanOrEqualTo(tasks);
            last = s.get("completed").asLong();
        }
    }

    @Test
    void tlsMeasuresPlainAndTlsInTheSameRun() throws Exception {
        int rc = new CommandLine(new BenchCommand()).execute("tls", "--tasks", "2000", "--latency-tasks", "50",
                "--rounds", "1", "--out", out.toString());
        assertThat(rc).isZero();
        JsonNode rows = rows("tls");
        assertThat(rows.findValuesAsText("mode")).containsExactly("plain", "tls");
        for (JsonNode r : rows) {
            assertThat(r.get("tasksPerSecond").asDouble()).isPositive();
            assertThat(r.get("latencyP99ms").asDouble()).isGreaterThanOrEqualTo(r.get("latencyP50ms").asDouble());
        }
    }

    @Test
    void throughputAndScaleMeasureARunningDispatcherAsTheyFindIt() throws Exception {
        try (LocalCluster cluster = new LocalCluster(DispatcherConfig.local(), 3, 1, true,
                (LocalExecutors.Impl) null, 0)) {
            // a running dispatcher admits a benchmark only with its token, given as to every client
            int rc = new CommandLine(new BenchCommand()).execute("throughput", "--dispatcher", cluster.address(),
                    "--token", "not-the-token", "--bundles", "1", "--tasks", "10", "--rounds", "1",
                    "--out", out.toString());
            assertThat(rc).isNotZero();
            Path tokenFile = Files.writeString(out.resolve("token"), cluster.token().value());
            rc = new CommandLine(new BenchCommand()).execute("throughput", "--dispatcher", cluster.address(),
                    "--token-file", tokenFile.toString(), "--bundles", "1,10", "--tasks", "600", "--rounds", "1",
                    "--out", out.toString());
            assertThat(rc).isZero();
            JsonNode rows = rows("throughput");
            assertThat(rows.findValuesAsText("mode")).containsExactly("remote", "remote");
            assertThat(rows.findValuesAsText("executors")).containsOnly("3");
            assertThat(rows.findValuesAsText("bundle")).containsExactly("1", "10");
            rc = new CommandLine(new BenchCommand()).execute("scale", "--dispatcher", cluster.address(),
                    "--token-file", tokenFile.toString(), "--executors", "3", "--tasks-per-executor", "20", "--out", out.toString());
            assertThat(rc).isZero();
            JsonNode row = rows("scale").get(0);
            assertThat(row.get("tasks").asInt()).isEqualTo(60);
            assertThat(row.get("jvms").asInt()).isZero(); // none started here
        }
    }

    private JsonNode rows(String name) throws IOException {
        return new ObjectMapper().readTree(out.resolve(name + ".json").toFile()).get("rows");
    }

    /** Each series' latency never falls as the percentile rises. */
    private void assertPercentileCurves(String name, int series) throws IOException {
        Map<String, Double> last = new HashMap<>();
        for (JsonNode r : rows(name)) {
            double ms = r.get("ms").asDouble();
            Double before = last.put(r.get("series").asText(), ms);
            if (before != null) {
                assertThat(ms).as(r.toString()).isGreaterThanOrEqualTo(before);
            }
        }
        assertThat(last).hasSize(series);
    }

    /** What the benchmark wrote is what the report reads: it plots without complaint. */
    private void assertReportPlots(String... pngs) throws IOException {
        Path docs = out.resolve("docs");
        StringWriter err = new StringWriter();
        int rc = new CommandLine(new BenchCommand()).setErr(new PrintWriter(err))
                .execute("report", "--results", out.toString(), "--docs", docs.toString());
        assertThat(rc).isZero();
        for (String png : pngs) {
            assertThat(ImageIO.read(docs.resolve("report").resolve(png).toFile())).as(png).isNotNull();
        }
    }
}
