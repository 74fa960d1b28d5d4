package io.falkon.e2e.commands;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Task files from people one does not trust, through {@code falkon run} as a user runs it (issue 53):
 * every line has exactly one result, the file check refuses what cannot be right before anything
 * runs (exit 2, {@code FILE:LINE: reason}), and a persistent worker given as a command line runs as
 * written by {@code /bin/sh}.
 */
class UntrustedTaskFileTest {
    @TempDir
    Path dir;

    @Test
    void aTaskTheDispatcherRefusesHasItsLineInTheResultsAndIsRerun() throws Exception {
        // 1.5 MB of argument: under what the file check allows, over the embedded dispatcher's 1 MiB
        String big = "x".repeat(1_500_000);
        Path file = Files.writeString(dir.resolve("tasks.jsonl"), "{\"args\": [\"echo\", \"one\"]}\n"
                + "{\"args\": [\"echo\", \"" + big + "\"]}\n" + "{\"args\": [\"echo\", \"three\"]}\n");
        Path results = dir.resolve("results.jsonl");
        Cli.Result r = Cli.run(dir, "run", "-q", "--results", results.toString(), file.toString());
        assertThat(r.exit()).as(r.stderr()).isEqualTo(1);
        assertThat(r.stderr()).contains("line 2: refused by the dispatcher");
        List<JsonNode> lines = Files.readAllLines(results).stream().map(RunCommandTest.Cli2::parse).toList();
        assertThat(lines).as("one result per line of the file").hasSize(3)
                .extracting(n -> n.get("line").asInt()).containsExactlyInAnyOrder(1, 2, 3);
        JsonNode refused = lines.stream().filter(n -> n.get("line").asInt() == 2).findFirst().orElseThrow();
        assertThat(refused.get("status").asText()).isEqualTo("REFUSED");
        assertThat(refused.get("succeeded").asBoolean()).isFalse();
        assertThat(refused.get("task").asInt()).isEqualTo(2);
        assertThat(refused.get("detail").asText()).contains("refused by the dispatcher");
        Cli.Result rerun = Cli.run(dir, "run", "--dry-run", "--rerun-failed", results.toString(), file.toString());
        assertThat(rerun.exit()).as(rerun.stderr()).isZero();
        assertThat(rerun.stdout().lines().toList()).as("the refused line is the one to run again").hasSize(1)
                .allSatisfy(l -> assertThat(l).startsWith("echo xxx"));
    }

    @Test
    void theFileCheckRefusesIdsAndCyclesThatCannotBeRightBeforeAnythingRuns() throws Exception {
        Path ran = dir.resolve("ran");
        String touch = "touch " + ran;
        for (String line : List.of(
                "{\"shell\": \"" + touch + "\", \"outputs\": [{\"path\": \"o\", \"id\": \"res/q/../x\"}]}",
                "{\"shell\": \"" + touch + "\", \"outputs\": [{\"path\": \"o\", \"id\": \"res/x\\u0000-other\"}]}",
                "{\"shell\": \"" + touch + "\", \"outputs\": [{\"path\": \"o\", \"id\": \"k\\nevil\"}]}",
                "{\"shell\": \"" + touch + "\", \"outputs\": [{\"path\": \"o\", \"id\": \"/etc/x\"}]}",
                "{\"shell\": \"" + touch + "\", \"inputs\": [{\"id\": \"a/../b\"}]}",
                "{\"shell\": \"" + touch + "\", \"name\": \"a\", \"after\": [\"a\"]}")) {
            Path file = Files.writeString(dir.resolve("bad.jsonl"), "{\"shell\": \"" + touch + "\"}\n" + line + "\n");
            Cli.Result r = Cli.run(dir, "run", file.toString());
            assertThat(r.exit()).as("%s: %s", line, r.stderr()).isEqualTo(2);
            assertThat(r.stderr()).contains("bad.jsonl:2: ");
            assertThat(ran).as("nothing ran").doesNotExist();
        }
        // a cycle through 100,000 tasks is named by its ends, in one line a person can read
        StringBuilder cycle = new StringBuilder();
        int n = 100_000;
        for (int i = 0; i < n; i++) {
            cycle.append("{\"shell\": \"true\", \"name\": \"t").append(i).append("\", \"after\": [\"t")
                    .append((i + 1) % n).append("\"]}\n");
        }
        Cli.Result r = Cli.run(dir, "run", Files.writeString(dir.resolve("cycle.jsonl"), cycle).toString());
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr()).contains("a cycle of 100000 tasks: line ").contains("more lines)");
        assertThat(r.stderr().length()).as(r.stderr()).isLessThan(600);
    }

    @Test
    void aWorkerGivenAsACommandLineRunsAsWrittenAndOneThatNeverAnswersFailsItsTask() throws Exception {
        Path d = Files.createDirectories(dir.resolve("d"));
        Path w = d.resolve("w");
        Files.writeString(w, "#!/usr/bin/env python3\n"
                + "import os\nfrom falkon import resident\n"
                + "resident.serve(lambda req: (0, ('FOO=%s cwd=%s %s\\n' % (os.environ.get('FOO', '-'), "
                + "os.path.basename(os.environ.get('PWD', '')), ' '.join(req.argv))).encode(), b''))\n");
        Files.setPosixFilePermissions(w, PosixFilePermissions.fromString("rwxr-xr-x"));
        String env = "\"env\": {\"PYTHONPATH\": \"" + Path.of("").toAbsolutePath().getParent().resolve("python/src")
                + "\"}";
        Path file = Files.writeString(dir.resolve("workers.jsonl"), String.join("\n",
                "{\"args\": [\"cd\"], \"worker\": \"cd d && ./w\", " + env + "}",
                "{\"args\": [\"env\"], \"worker\": \"FOO=1 ./d/w\", " + env + "}",
                "{\"args\": [\"late\"], \"worker\": \"sleep 0.2; exec ./d/w\", " + env + "}",
                "{\"args\": [\"silent\"], \"worker\": [\"/bin/true\"]}") + "\n");
        Path results = dir.resolve("results.jsonl");
        Cli.Result r = Cli.run(dir, "run", "-q", "--results", results.toString(), file.toString());
        assertThat(r.exit()).as(r.stderr()).isEqualTo(1);
        List<JsonNode> lines = Files.readAllLines(results).stream().map(RunCommandTest.Cli2::parse).toList();
        java.util.function.IntFunction<JsonNode> line = i -> lines.stream().filter(x -> x.get("line").asInt() == i)
                .findFirst().orElseThrow();
        assertThat(line.apply(1).get("succeeded").asBoolean()).as(line.apply(1).toString()).isTrue();
        assertThat(line.apply(1).get("stdout").asText()).contains("cwd=d cd");
        assertThat(line.apply(2).get("stdout").asText()).contains("FOO=1 ", "env");
        assertThat(line.apply(3).get("stdout").asText()).as("what it was given ran: no silent success").contains("late");
        JsonNode silent = line.apply(4);
        assertThat(silent.get("succeeded").asBoolean()).isFalse();
        assertThat(silent.get("status").asText()).isEqualTo("LAUNCH_FAILED");
        assertThat(silent.get("detail").asText()).contains("exited (exit status 0) without answering task");
    }
}
