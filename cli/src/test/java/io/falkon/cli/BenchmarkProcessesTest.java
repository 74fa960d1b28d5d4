package io.falkon.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The benchmarks that start dispatchers as processes of their own ({@code falkon bench queue},
 * {@code lattice}, {@code distributed}), on tiny sizes, through {@code falkon bench} as a user runs
 * it. Here rather than beside the other benchmark smoke tests: those processes run {@code falkon
 * dispatcher}, a command of this module, which the benchmarks module below it cannot see.
 * Correctness only: the figures themselves are never asserted.
 */
class BenchmarkProcessesTest {
    @TempDir
    Path out;

    private int bench(String... args) {
        String[] all = new String[args.length + 1];
        all[0] = "bench";
        System.arraycopy(args, 0, all, 1, args.length);
        return Falkon.commandLine(all).execute(all);
    }

    private JsonNode rows(String name) throws IOException {
        return new ObjectMapper().readTree(out.resolve(name + ".json").toFile()).get("rows");
    }

    @Test
    void queueFillsAndDrainsADispatcherInItsOwnJvm() throws Exception {
        assertThat(bench("queue", "--tasks", "20000", "--heap", "128m", "--out", out.toString())).isZero();
        JsonNode row = rows("queue").get(0);
        assertThat(row.get("tasks").asInt()).isEqualTo(20000);
        assertThat(row.get("liveBytesPerQueuedTask").asDouble()).isPositive();
        assertThat(row.get("drainTasksPerSecond").asDouble()).isPositive();
    }

    @Test
    void latticeHoldsEveryLaterLayerWaitingThenReleasesItLayerByLayer() throws Exception {
        assertThat(bench("lattice", "--width", "30", "--depth", "20", "--heap", "128m", "--out", out.toString()))
                .isZero();
        JsonNode rows = rows("lattice");
        assertThat(rows.findValuesAsText("form")).containsExactly("independent", "lattice");
        assertThat(rows.get(0).get("waiting").asInt()).isZero();
        assertThat(rows.get(1).get("waiting").asInt()).isEqualTo(30 * 19);
        for (JsonNode r : rows) {
            assertThat(r.get("tasks").asInt()).isEqualTo(600);
            assertThat(r.get("tasksPerSecond").asDouble()).as(r.toString()).isPositive();
        }
        assertThat(rows.get(1).get("releasesPerSecond").asDouble()).isPositive();
    }

    @Test
    void distributedSpreadsTasksOverDispatcherProcessesAndChargesEachTier() throws Exception {
        assertThat(bench("distributed", "--dispatchers", "2", "--executors-per-dispatcher", "20", "--tasks", "3000",
                "--out", out.toString())).isZero();
        JsonNode row = rows("distributed").get(0);
        assertThat(row.get("executors").asInt()).isEqualTo(40);
        assertThat(row.get("tasks").asInt()).isEqualTo(3000);
        assertThat(row.get("tasksPerSecond").asDouble()).isPositive();
        // every tier did work for the tasks: the client, the dispatcher processes, the executor JVMs
        assertThat(row.get("clientCpuMicrosPerTask").asDouble()).isPositive();
        assertThat(row.get("dispatcherCpuMicrosPerTask").asDouble()).isPositive();
        assertThat(row.get("executorCpuMicrosPerTask").asDouble()).isPositive();
    }
}
