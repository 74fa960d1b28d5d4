package io.falkon.e2e.commands;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code falkon run --skip-done} as a user resumes a workflow (issue 56): a task whose outputs are in
 * the store and not older than its inputs is not run, and says so in the results and the summary;
 * what depends on a task that runs runs too; a task without outputs is done by its success in the
 * results file; {@code --dry-run} says, for each task, whether it would run and why, and runs nothing.
 */
class SkipDoneCommandTest {
    /** Any time well before the tests run: a file set to it was not written by them. */
    private static final FileTime LONG_AGO = FileTime.fromMillis(1_000_000_000_000L);

    @TempDir
    Path dir;

    /**
     * a: data/in.txt -> res/a.txt; b: res/a.txt -> res/b.txt (fails until {@code fixed} exists);
     * c: after b, no outputs; d: on its own, no outputs. Each appends its name to {@code ran}.
     */
    private Path workflow(Path store) throws Exception {
        Files.createDirectories(store.resolve("data"));
        Files.writeString(store.resolve("data/in.txt"), "raw\n");
        Path ran = dir.resolve("ran");
        Path fixed = dir.resolve("fixed");
        return Files.writeString(dir.resolve("wf.jsonl"), String.join("\n",
                "{\"name\": \"a\", \"shell\": \"echo a >> '" + ran + "'; tr a-z A-Z < in > o\", \"inputs\": [{\"id\": "
                        + "\"data/in.txt\", \"name\": \"in\"}], \"outputs\": [{\"path\": \"o\", \"id\": \"res/a.txt\"}]}",
                "{\"name\": \"b\", \"shell\": \"echo b >> '" + ran + "'; test -e '" + fixed + "' && cat in in > o\", "
                        + "\"inputs\": [{\"id\": \"res/a.txt\", \"name\": \"in\"}], \"outputs\": [{\"path\": \"o\", "
                        + "\"id\": \"res/b.txt\"}]}",
                "{\"name\": \"c\", \"shell\": \"echo c >> '" + ran + "'\", \"after\": [\"b\"]}",
                "{\"shell\": \"echo d >> '" + ran + "'\"}") + "\n");
    }

    private List<String> ranAndForget() throws Exception {
        Path ran = dir.resolve("ran");
        if (!Files.exists(ran)) {
            return List.of();
        }
        List<String> names = Files.readAllLines(ran);
        Files.delete(ran);
        return names;
    }

    private static Map<Integer, JsonNode> lastResults(Path results) throws Exception {
        Map<Integer, JsonNode> byLine = new HashMap<>();
        for (String l : Files.readAllLines(results)) {
            JsonNode n = RunCommandTest.Cli2.parse(l);
            byLine.put(n.get("line").asInt(), n);
        }
        return byLine;
    }

    @Test
    void aResumedWorkflowRunsOnlyWhatIsNotDoneAndSaysWhatItSkipped() throws Exception {
        Path store = dir.resolve("store");
        Path wf = workflow(store);
        Path results = dir.resolve("r.jsonl");
        Cli.Result first = Cli.run(dir, "run", "-q", "--store", store.toString(), "--results", results.toString(),
                "--skip-done", wf.toString());
        assertThat(first.exit()).as(first.stderr()).isEqualTo(1);
        assertThat(ranAndForget()).containsExactlyInAnyOrder("a", "b", "d"); // c waits for b, which failed
        Files.setLastModifiedTime(store.resolve("res/a.txt"), Files.getLastModifiedTime(store.resolve("data/in.txt")));
        FileTime aWritten = Files.getLastModifiedTime(store.resolve("res/a.txt"));

        Files.createFile(dir.resolve("fixed"));
        Cli.Result resumed = Cli.run(dir, "run", "-q", "--store", store.toString(), "--results", results.toString(),
                "--skip-done", wf.toString());
        assertThat(resumed.exit()).as(resumed.stderr()).isZero();
        assertThat(ranAndForget()).as("a (outputs present) and d (succeeded before) are done")
                .containsExactlyInAnyOrder("b", "c");
        assertThat(Files.getLastModifiedTime(store.resolve("res/a.txt"))).as("a done: its output not written again")
                .isEqualTo(aWritten);
        assertThat(store.resolve("res/b.txt")).hasContent("RAW\nRAW");
        assertThat(resumed.stderr()).contains("running 2 of the 4 tasks of " + wf + "; 2 are done")
                .contains("4 tasks: 2 succeeded, 0 failed, 2 skipped (done before)");
        Map<Integer, JsonNode> last = lastResults(results);
        assertThat(last.get(1).get("status").asText()).isEqualTo("SKIPPED");
        assertThat(last.get(1).get("detail").asText()).isEqualTo("done: its outputs are in the store");
        assertThat(last.get(4).get("status").asText()).isEqualTo("SKIPPED");
        assertThat(last.get(4).get("detail").asText()).startsWith("done: it succeeded before");
        assertThat(last.get(4).get("task").asInt()).isEqualTo(4);
        assertThat(last.get(2).get("status").asText()).isEqualTo("EXITED");
        assertThat(last.get(3).get("succeeded").asBoolean()).isTrue();

        Cli.Result again = Cli.run(dir, "run", "-q", "--json", "--store", store.toString(), "--results",
                results.toString(), "--skip-done", wf.toString());
        assertThat(again.exit()).as(again.stderr()).isZero();
        assertThat(again.stderr()).contains("nothing to run: every task of " + wf + " is done");
        assertThat(ranAndForget()).isEmpty();
    }

    @Test
    void aDryRunSaysWhatWouldRunAndWhyAndRunsNothing() throws Exception {
        Path store = dir.resolve("store");
        Path wf = workflow(store);
        Files.createFile(dir.resolve("fixed"));
        Path results = dir.resolve("r.jsonl");
        Cli.Result first = Cli.run(dir, "run", "-q", "--store", store.toString(), "--results", results.toString(),
                wf.toString());
        assertThat(first.exit()).as(first.stderr()).isZero();
        ranAndForget();
        // the input changed after the first run: a's output is older than it
        for (String f : List.of("res/a.txt", "res/b.txt")) {
            Files.setLastModifiedTime(store.resolve(f), LONG_AGO);
        }
        byte[] before = Files.readAllBytes(results);
        Cli.Result dry = Cli.run(dir, "run", "--store", store.toString(), "--results", results.toString(),
                "--skip-done", "--dry-run", wf.toString());
        assertThat(dry.exit()).as(dry.stderr()).isZero();
        assertThat(dry.stdout().lines()).as("the commands that would run, one per line").hasSize(3)
                .allMatch(l -> !l.contains("echo d"));
        assertThat(dry.stderr()).contains(
                "line 1: runs: its output 'res/a.txt' is older than its input 'data/in.txt'",
                "line 2: runs: line 1 runs, and it needs 'res/a.txt' from it",
                "line 3: runs: line 2 runs, and it runs after 'b'",
                "line 4: done: it succeeded before (" + results + ")",
                "3 of the 4 tasks would run; 1 is done");
        assertThat(ranAndForget()).as("a dry run runs nothing").isEmpty();
        assertThat(Files.readAllBytes(results)).as("nor writes a result").isEqualTo(before);
        assertThat(Files.getLastModifiedTime(store.resolve("res/a.txt"))).isEqualTo(LONG_AGO);

        // a changed line is not what succeeded before: it runs
        Files.writeString(wf, Files.readString(wf).replace("echo d >>", "echo d  >>"));
        Cli.Result changed = Cli.run(dir, "run", "--store", store.toString(), "--results", results.toString(),
                "--skip-done", "--dry-run", wf.toString());
        assertThat(changed.stderr()).contains("line 4: runs: its line is not what succeeded before");
    }

    @Test
    void aTaskThatRunsBringsBackTheProducerOfItsTemporaryInputAndNothingElse() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store"));
        Path ran = dir.resolve("ran");
        Path wf = Files.writeString(dir.resolve("wf.jsonl"), String.join("\n",
                "{\"name\": \"nums\", \"shell\": \"echo nums >> '" + ran + "'; seq 1 5 > n\", \"outputs\": [{\"path\": "
                        + "\"n\", \"id\": \"tmp/nums\", \"temporary\": true}]}",
                "{\"name\": \"sum\", \"shell\": \"echo sum >> '" + ran + "'; awk '{s+=$1} END {print s}' n > s\", "
                        + "\"inputs\": [{\"id\": \"tmp/nums\", \"name\": \"n\"}], \"outputs\": [{\"path\": \"s\", "
                        + "\"id\": \"res/sum\"}]}",
                "{\"name\": \"max\", \"shell\": \"echo max >> '" + ran + "'; tail -1 n > m\", \"inputs\": [{\"id\": "
                        + "\"tmp/nums\", \"name\": \"n\"}], \"outputs\": [{\"path\": \"m\", \"id\": \"res/max\"}]}") + "\n");
        Cli.Result first = Cli.run(dir, "run", "-q", "--cache-size", "64m", "--store", store.toString(),
                "--skip-done", wf.toString());
        assertThat(first.exit()).as(first.stderr()).isZero();
        assertThat(ranAndForget()).containsExactlyInAnyOrder("nums", "sum", "max");
        Cli.Result allDone = Cli.run(dir, "run", "-q", "--cache-size", "64m", "--store", store.toString(),
                "--skip-done", "--dry-run", wf.toString());
        assertThat(allDone.stderr()).contains("line 1: done: its outputs are temporary, and the tasks that read "
                + "them are done");

        Files.delete(store.resolve("res/max"));
        Cli.Result resumed = Cli.run(dir, "run", "-q", "--cache-size", "64m", "--store", store.toString(),
                "--skip-done", wf.toString());
        assertThat(resumed.exit()).as(resumed.stderr()).isZero();
        assertThat(ranAndForget()).as("the temporary's producer comes back for max; sum stays done")
                .containsExactlyInAnyOrder("nums", "max");
        assertThat(store.resolve("res/max")).hasContent("5");
        assertThat(store.resolve("tmp")).doesNotExist();
    }

    @Test
    void whatSkipDoneCannotDecideIsRefusedNamingTheOption() throws Exception {
        Path store = dir.resolve("store");
        Path wf = workflow(store);
        Cli.Result stdin = Cli.runWithInput(dir, "echo hi\n", "run", "--skip-done", "-");
        assertThat(stdin.exit()).isEqualTo(2);
        assertThat(stdin.stderr()).contains("--skip-done needs the task file itself, not standard input");
        Path results = Files.writeString(dir.resolve("r.jsonl"), "");
        Cli.Result both = Cli.run(dir, "run", "--skip-done", "--rerun-failed", results.toString(), wf.toString());
        assertThat(both.exit()).isEqualTo(2);
        assertThat(both.stderr()).contains("--skip-done and --rerun-failed both choose which tasks run");
        // falkon submit cannot know where a remote dispatcher's store is: it is told, or refuses
        Cli.Result noStore = Cli.run(dir, "submit", "--dispatcher", "127.0.0.1:1", "--skip-done", wf.toString());
        assertThat(noStore.exit()).isEqualTo(2);
        assertThat(noStore.stderr()).contains("--skip-done: line 1 declares outputs").contains("--store DIR");
        Files.writeString(results, "{\"line\": 1, \"succeeded\": true}\nnot json\n");
        Cli.Result bad = Cli.run(dir, "run", "--store", store.toString(), "--results", results.toString(),
                "--skip-done", wf.toString());
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.stderr()).contains(results + ":2: not a result");
    }
}
