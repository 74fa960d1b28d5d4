package io.falkon.e2e.commands;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Workflows in one task file, run by the real {@code falkon run}: tasks wait inside the dispatcher
 * for what others produce (docs/workflows.md); what cannot run is refused before anything does.
 */
class WorkflowTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    /** A task that appends its name to ran.log, reads its inputs into its output, then maybe fails. */
    private static String task(String name, String out, List<String> in, List<String> after, String extra) {
        StringBuilder cmd = new StringBuilder("echo " + name + " >> ran.log");
        if (out != null) {
            cmd.append("; { echo ").append(name);
            for (String i : in) {
                cmd.append("; cat ").append(i);
            }
            cmd.append("; } > ").append(out);
        }
        cmd.append(extra);
        StringBuilder j = new StringBuilder("{\"name\": \"" + name + "\", \"shell\": \"" + cmd
                + "\", \"dir\": \"RUN_DIR\"");
        if (out != null) {
            j.append(", \"outputs\": [{\"path\": \"").append(out).append("\", \"id\": \"").append(out).append("\"}]");
        }
        if (!in.isEmpty()) {
            j.append(", \"inputs\": [").append(in.stream().map(i -> "{\"id\": \"" + i + "\"}")
                    .collect(Collectors.joining(", "))).append("]");
        }
        if (!after.isEmpty()) {
            j.append(", \"after\": [").append(after.stream().map(a -> "\"" + a + "\"").collect(Collectors.joining(", ")))
                    .append("]");
        }
        return j.append("}\n").toString();
    }

    private Path file(String name, String... tasks) throws Exception {
        return Files.writeString(dir.resolve(name), String.join("", tasks).replace("RUN_DIR", dir.toString()));
    }

    private Map<Integer, JsonNode> results(Path file) throws Exception {
        Map<Integer, JsonNode> byLine = new HashMap<>();
        for (String l : Files.readAllLines(file)) {
            JsonNode n = JSON.readTree(l);
            byLine.put(n.get("line").asInt(), n);
        }
        return byLine;
    }

    private List<String> ran() throws Exception {
        Path log = dir.resolve("ran.log");
        return Files.exists(log) ? Files.readAllLines(log) : List.of();
    }

    @Test
    void everyConsumerStartsAfterItsProducersFinishAndReadsWhatTheyWrote() throws Exception {
        // a diamond per branch: split -> three transforms -> a gather of all three, then a last step after it
        Path wf = file("wf.jsonl",
                task("split", "s.txt", List.of(), List.of(), ""),
                task("t1", "t1.txt", List.of("s.txt"), List.of(), ""),
                task("t2", "t2.txt", List.of("s.txt"), List.of(), ""),
                task("t3", "t3.txt", List.of("s.txt"), List.of(), ""),
                task("gather", "all.txt", List.of("t1.txt", "t2.txt", "t3.txt"), List.of(), ""),
                task("done", null, List.of(), List.of("gather"), ""));
        Path results = dir.resolve("r.jsonl");
        Cli.Result r = Cli.run(dir, "run", "--slots", "3", "--store", dir.toString(), "--results", results.toString(),
                wf.toString());
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(Files.readString(dir.resolve("all.txt"))).isEqualTo("gather\nt1\nsplit\nt2\nsplit\nt3\nsplit\n");
        Map<Integer, JsonNode> res = results(results);
        Map<Integer, List<Integer>> needs = Map.of(2, List.of(1), 3, List.of(1), 4, List.of(1), 5, List.of(2, 3, 4),
                6, List.of(5));
        needs.forEach((consumer, producers) -> {
            for (int p : producers) {
                assertThat(res.get(consumer).get("startedMicros").asLong()).as("line %d starts after line %d ends",
                        consumer, p).isGreaterThanOrEqualTo(res.get(p).get("finishedMicros").asLong());
            }
        });
        // each result line says where the task's inputs came from and what it wrote to the store
        JsonNode gather = res.get(5).get("data");
        assertThat(gather.get("localHits").asLong() + gather.get("peerHits").asLong() + gather.get("misses").asLong())
                .as("the gather's three inputs").isEqualTo(3);
        assertThat(res.get(1).at("/data/bytesWritten").asLong()).as("split wrote s.txt").isEqualTo("split\n".length());
        assertThat(res.get(6).has("data")).as("no inputs, no outputs").isFalse();
    }

    @Test
    void aFailedTaskFailsWhatNeedsItWithoutRunningItAndTheRestRuns() throws Exception {
        Path wf = file("fail.jsonl",
                task("a", "a.txt", List.of(), List.of(), "; exit 3"),
                task("b", "b.txt", List.of("a.txt"), List.of(), ""),
                task("c", null, List.of(), List.of("b"), ""),
                task("other", "o.txt", List.of(), List.of(), ""));
        Path results = dir.resolve("r.jsonl");
        Cli.Result r = Cli.run(dir, "run", "--store", dir.toString(), "--results", results.toString(), wf.toString());
        assertThat(r.exit()).isEqualTo(1);
        assertThat(new TreeSet<>(ran())).containsExactly("a", "other");
        assertThat(r.stderr()).contains("line 1: exit 3")
                .contains("line 2: not run: line 1 did not succeed (it needs 'a.txt')")
                .contains("line 3: not run: line 1 did not succeed (it runs after 'b')")
                .contains("4 tasks: 1 succeeded, 3 failed (2 not run: a task they need failed)");
        Map<Integer, JsonNode> res = results(results);
        assertThat(res.get(2).get("status").asText()).isEqualTo("DEPENDENCY_FAILED");
        assertThat(res.get(3).get("status").asText()).isEqualTo("DEPENDENCY_FAILED");

        // the rerun runs exactly what did not succeed: the failed task and what needs it
        Files.delete(dir.resolve("ran.log"));
        Files.writeString(wf, Files.readString(wf).replace("; exit 3", ""));
        Cli.Result again = Cli.run(dir, "run", "--store", dir.toString(), "--rerun-failed", results.toString(),
                "--results", results.toString(), wf.toString());
        assertThat(again.exit()).as(again.stderr()).isZero();
        assertThat(again.stderr()).contains("rerunning 3 of the 4 tasks");
        assertThat(ran()).containsExactly("a", "b", "c");
    }

    @Test
    void aFileThatCannotRunIsRefusedBeforeAnythingRunsNamingTheLine() throws Exception {
        String first = task("first", "f.txt", List.of(), List.of(), "");
        Map<String, String> files = Map.of(
                "cycle.jsonl", first + task("x", null, List.of(), List.of("y"), "") + task("y", null, List.of(),
                        List.of("x"), ""),
                "unknown-input.jsonl", first + task("u", null, List.of("nowhere.txt"), List.of(), ""),
                "unknown-after.jsonl", first + task("u", null, List.of(), List.of("nobody"), ""),
                "twice.jsonl", first + task("first", null, List.of(), List.of(), ""),
                "two-producers.jsonl", first + task("g", "f.txt", List.of(), List.of(), ""));
        Map<String, String> why = Map.of(
                "cycle.jsonl", ":2: a cycle: line 2 needs line 3 needs line 2",
                "unknown-input.jsonl", ":2: its input 'nowhere.txt' is an output of no task of the file and is not in "
                        + "the store",
                "unknown-after.jsonl", ":2: after: no task of the file is named 'nobody'",
                "twice.jsonl", ":2: the name 'first' is already the name of line 1",
                "two-producers.jsonl", ":2: object 'f.txt' is already an output of line 1");
        for (Map.Entry<String, String> f : files.entrySet()) {
            Path wf = file(f.getKey(), f.getValue());
            Cli.Result r = Cli.run(dir, "run", "--store", dir.toString(), wf.toString());
            assertThat(r.exit()).as(f.getKey()).isEqualTo(2);
            assertThat(r.stderr().strip()).as(f.getKey()).startsWith("falkon run: " + wf + why.get(f.getKey()));
            assertThat(ran()).as("nothing ran for %s", f.getKey()).isEmpty();
        }
    }

    @Test
    void aFileInAnyOrderRunsInADependencyOrder() throws Exception {
        Path wf = file("reversed.jsonl",
                task("last", "l.txt", List.of("m.txt"), List.of(), ""),
                task("middle", "m.txt", List.of("f.txt"), List.of(), ""),
                task("first", "f.txt", List.of(), List.of(), ""));
        Cli.Result r = Cli.run(dir, "run", "--slots", "2", "--store", dir.toString(), wf.toString());
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(ran()).containsExactly("first", "middle", "last");
        assertThat(Files.readString(dir.resolve("l.txt"))).isEqualTo("last\nmiddle\nfirst\n");
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"c", "java"})
    void aPipelinesSecondStageRunsWhereTheFirstLeftItsOutputNotReadingTheStore(String impl) throws Exception {
        StringBuilder chains = new StringBuilder();
        for (int i = 1; i <= 4; i++) {
            chains.append(task("a" + i, "a" + i + ".txt", List.of(), List.of(), ""))
                    .append(task("b" + i, null, List.of("a" + i + ".txt"), List.of(), ""));
        }
        Path wf = file("chains.jsonl", chains.toString());
        Cli.Result r = Cli.run(dir, "run", "--executor", impl, "--executors", "2", "--slots", "2", "--cache-size",
                "10m", "--policy", "max-compute-util", "--store", dir.toString(), "--json", wf.toString());
        assertThat(r.exit()).as(r.stderr()).isZero();
        JsonNode data = JSON.readTree(r.stdout()).get("data");
        assertThat(data.get("localHits").asInt()).as("every second stage read its input from its own cache")
                .isEqualTo(4);
        assertThat(data.get("misses").asInt()).as("nothing read from the store").isZero();
    }

    @Test
    void theDryRunShowsTheTasksInTheOrderTheyAreSubmitted() throws Exception {
        Path wf = file("order.jsonl", task("b", null, List.of(), List.of("a"), ""), task("a", null, List.of(),
                List.of(), ""));
        Cli.Result r = Cli.run(dir, "run", "--dry-run", wf.toString());
        assertThat(r.exit()).isZero();
        Set<String> lines = Set.copyOf(r.stdout().lines().toList());
        assertThat(r.stdout().lines().toList().get(0)).contains("echo a >> ran.log");
        assertThat(lines).hasSize(2);
    }
}
