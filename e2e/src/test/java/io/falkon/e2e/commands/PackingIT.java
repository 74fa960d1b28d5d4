package io.falkon.e2e.commands;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Issue 36's packing check through {@code falkon run}, on the C executor (the default) with two
 * slots on two CPUs of its own: 20 tasks of 2 cores compressing with {@code xz -T2}, 40 of 1 core
 * between them, and one of 3 cores that no executor can hold.
 */
class PackingIT {
    @TempDir
    Path dir;

    @Test
    void tasksOfTwoCoresAndOfOneShareTwoSlotsWithoutOversubscribingThemOrStarving() throws Exception {
        Set<Integer> cpus = CExecutorIT.cpusAllowed(Files.readString(Path.of("/proc/self/status")));
        assumeTrue(cpus.size() >= 2, "needs two CPUs");
        List<Integer> two = cpus.stream().limit(2).toList();
        Path data = Files.write(dir.resolve("data.bin"), new java.util.Random(36).ints(3_000_000 / 4)
                .collect(java.io.ByteArrayOutputStream::new, (o, i) -> o.write(i), (a, b) -> { })
                .toByteArray());
        StringBuilder file = new StringBuilder();
        Map<Integer, Integer> coresOfLine = new HashMap<>();
        int line = 0;
        String mask = "grep Cpus_allowed_list: /proc/self/status";
        for (int i = 0; i < 20; i++) {
            file.append("{\"shell\": \"xz -T2 -1 -c ").append(data).append(" > /dev/null && ").append(mask)
                    .append("\", \"cores\": 2}\n");
            coresOfLine.put(++line, 2);
            for (int k = 0; k < 2; k++) {
                file.append("{\"shell\": \"").append(mask).append("; sleep 0.02\", \"cores\": 1}\n");
                coresOfLine.put(++line, 1);
            }
        }
        file.append("{\"shell\": \"true\", \"cores\": 3}\n");
        int tooWide = ++line;
        Path tasks = Files.writeString(dir.resolve("tasks.jsonl"), file);
        Path results = dir.resolve("results.jsonl");
        // two CPUs of its own and two slots: the C executor pins its slots (auto), so a task that states
        // its cores gets that many CPUs
        List<String> cmd = new ArrayList<>(List.of("taskset", "-c", two.get(0) + "," + two.get(1)));
        cmd.addAll(Cli.falkon(List.of("-XX:TieredStopAtLevel=1")));
        cmd.addAll(List.of("run", "--executors", "1", "--slots", "2", "-q", "--results", results.toString(),
                tasks.toString()));
        Cli.Result r = Cli.program(dir, 5, cmd.toArray(String[]::new));
        assertThat(r.exit()).as("one task refused: %s", r.stderr()).isNotZero();

        ObjectMapper json = new ObjectMapper();
        List<long[]> runs = new ArrayList<>();
        int succeeded = 0;
        for (String l : Files.readAllLines(results)) {
            JsonNode o = json.readTree(l);
            int at = o.get("line").asInt();
            if (at == tooWide) {
                assertThat(o.get("status").asText()).isEqualTo("REJECTED");
                assertThat(o.get("detail").asText()).contains("needs 3 cores").contains("at most 2 slots");
                continue;
            }
            assertThat(o.get("succeeded").asBoolean()).as(l).isTrue();
            succeeded++;
            int cores = coresOfLine.get(at);
            assertThat(CExecutorIT.cpusAllowed(o.get("stdout").asText())).as("CPUs of line %d", at)
                    .hasSize(cores).isSubsetOf(two);
            runs.add(new long[]{o.get("startedMicros").asLong(), o.get("finishedMicros").asLong(), cores});
        }
        assertThat(succeeded).as("none starves: every task that fits ran").isEqualTo(60);
        assertThat(ExecutorContract.peakCores(runs)).as("cores of overlapping tasks").isEqualTo(2);
    }
}
