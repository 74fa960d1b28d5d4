package io.falkon.e2e.commands;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.ArrayList;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code falkon run} end to end: real dispatcher, real executor JVMs, real processes. */
class RunCommandTest {
    static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void tenThousandTrueTasksAllSucceed() throws Exception {
        Path file = dir.resolve("tasks.txt");
        Files.writeString(file, "# ten thousand no-op tasks\n\n" + "/bin/true\n".repeat(10_000));
        Cli.Result r = Cli.run(dir, "run", "--executors", "2", "--slots", "2", "--json", file.toString());
        assertThat(r.exit()).as(r.stderr()).isZero();
        JsonNode summary = JSON.readTree(r.stdout());
        assertThat(summary.get("tasks").asLong()).isEqualTo(10_000);
        assertThat(summary.get("succeeded").asLong()).isEqualTo(10_000);
        assertThat(summary.get("failed").asLong()).isZero();
        assertThat(summary.get("lost").asLong()).isZero();
        assertThat(summary.get("cancelled").asLong()).isZero();
        assertThat(summary.get("seconds").asDouble()).isPositive();
        assertThat(summary.get("tasksPerSecond").asDouble()).isPositive();
        assertThat(summary.get("startupSeconds").asDouble()).isPositive();
        assertThat(summary.size()).isEqualTo(8);
    }

    @Test
    void aTaskOverItsWallTimeIsKilledAndReportedAsTimeoutAndTheExitCodeSaysSo() throws Exception {
        Path file = dir.resolve("tasks.jsonl");
        Files.writeString(file, """
                {"shell": "sleep 30", "timeout": 0.5}
                {"args": ["/bin/echo", "fine"]}
                """);
        Path results = dir.resolve("results.jsonl");
        long t0 = System.nanoTime();
        Cli.Result r = Cli.run(dir, "run", "--json", "--results", results.toString(), file.toString());
        assertThat((System.nanoTime() - t0) / 1e9).as("did not wait for sleep 30").isLessThan(25);
        assertThat(r.exit()).isEqualTo(1);
        assertThat(JSON.readTree(r.stdout()).get("failed").asInt()).isEqualTo(1);
        assertThat(r.stderr()).contains("line 1: timeout (wall time 500 ms exceeded; process tree killed)");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(results)))
                .as("results hold the tasks' output: owner-only").isEqualTo("rw-------");
        List<JsonNode> lines = Files.readAllLines(results).stream().map(Cli2::parse).collect(Collectors.toList());
        JsonNode timedOut = lines.stream().filter(n -> n.get("line").asInt() == 1).findFirst().orElseThrow();
        assertThat(timedOut.get("status").asText()).isEqualTo("TIMEOUT");
        assertThat(timedOut.get("task").asInt()).as("numbered from 1, as {#} and --task N").isEqualTo(1);
        JsonNode fine = lines.stream().filter(n -> n.get("line").asInt() == 2).findFirst().orElseThrow();
        assertThat(fine.get("stdout").asText()).isEqualTo("fine\n");
        assertThat(fine.get("status").asText()).isEqualTo("EXITED");
    }

    @Test
    void stdoutBeyondTheCapIsTruncatedAndMarked() throws Exception {
        Path file = dir.resolve("big.txt");
        Files.writeString(file, "head -c 200000 /dev/zero | tr '\\0' x\n");
        Path results = dir.resolve("results.jsonl");
        Cli.Result r = Cli.run(dir, "run", "--results", results.toString(), file.toString());
        assertThat(r.exit()).as(r.stderr()).isZero();
        JsonNode n = Cli2.parse(Files.readAllLines(results).get(0));
        assertThat(n.get("stdout").asText()).hasSize(64 * 1024).matches("x+");
        assertThat(n.get("stdoutTruncated").asBoolean()).isTrue();
    }

    @Test
    void failingTasksMakeTheExitCodeNonZeroAndAreReportedWithTheirLine() throws Exception {
        Path file = dir.resolve("mixed.txt");
        Files.writeString(file, "true\n# comment\necho broken >&2; exit 4\necho kept\n");
        Cli.Result r = Cli.run(dir, "run", file.toString());
        assertThat(r.exit()).isEqualTo(1);
        // falkon run tasks.txt > out.txt: the tasks' output alone; Falkon's own lines on stderr
        assertThat(r.stdout()).isEqualTo("kept\n");
        assertThat(r.stderr()).contains("3 tasks: 2 succeeded, 1 failed").contains("line 3: exit 4: broken");
    }

    // ---- what a GNU parallel user reaches for ---------------------------------------------------

    @Test
    void dryRunPrintsTheCommandsAFileAndTemplateWouldRunAndRunsNothing() throws Exception {
        Path file = Files.writeString(dir.resolve("args.txt"), "a.fits 1\nit's $HOME\n");
        Cli.Result r = Cli.run(dir, "run", "--dry-run", "--template", "mProject {1} out/{#}.fits && touch ran-{#}",
                file.toString());
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo("mProject a.fits out/1.fits && touch ran-1\n"
                + "mProject 'it'\\''s' out/2.fits && touch ran-2\n");
        assertThat(dir.resolve("ran-1")).doesNotExist();
        Path jsonl = Files.writeString(dir.resolve("t.jsonl"), "{\"args\": [\"/bin/echo\", \"two words\"]}\n"
                + "{\"shell\": \"ls | wc -l\"}\n");
        assertThat(Cli.run(dir, "run", "--dry-run", jsonl.toString()).stdout())
                .isEqualTo("/bin/echo 'two words'\nls | wc -l\n");
    }

    @Test
    void tagPutsEachOutputLineAfterItsTasksLine() throws Exception {
        Path file = Files.writeString(dir.resolve("tag.txt"), "printf 'x\\ny\\n'\necho z >&2\n");
        Cli.Result r = Cli.run(dir, "run", "--tag", "--keep-order", file.toString());
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo("printf 'x\\ny\\n'\tx\nprintf 'x\\ny\\n'\ty\n");
        assertThat(r.stderr()).contains("echo z >&2\tz\n");
    }

    @Test
    void retriesRunATaskThatFailsAgainAndOnlyItsLastAttemptCounts() throws Exception {
        // fails the first two times it runs, then succeeds: each run adds a line to its own count file
        String flaky = "echo run >> count-{}; test $(wc -l < count-{}) -ge 3 && echo ok";
        Path file = Files.writeString(dir.resolve("flaky.txt"), "a\nb\n");
        Path results = dir.resolve("retried.jsonl");
        Cli.Result r = Cli.run(dir, "run", "--retries", "2", "--template", flaky, "--results", results.toString(),
                file.toString());
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo("ok\nok\n").as("the failed attempts' output is not shown");
        assertThat(r.stderr()).contains("2 tasks: 2 succeeded, 0 failed");
        assertThat(Files.readAllLines(results)).allSatisfy(l -> assertThat(Cli2.parse(l).get("attempt").asInt())
                .isEqualTo(2));
        assertThat(Files.readAllLines(dir.resolve("count-a"))).hasSize(3);
        // one retry is not enough
        Files.writeString(dir.resolve("once.txt"), "c\n");
        Cli.Result once = Cli.run(dir, "run", "--retries", "1", "--template", flaky, "once.txt");
        assertThat(once.exit()).isEqualTo(1);
        assertThat(once.stderr()).contains("1 tasks: 0 succeeded, 1 failed");
        assertThat(Files.readAllLines(dir.resolve("count-c"))).hasSize(2);
    }

    @Test
    void haltSoonStartsNothingMoreAfterTheFailuresAndLetsTheRunningFinish() throws Exception {
        StringBuilder sb = new StringBuilder("exit 3\nexit 4\n");
        for (int i = 0; i < 60; i++) {
            sb.append("sleep 0.05; echo ").append(i).append('\n');
        }
        Path file = Files.writeString(dir.resolve("halt.txt"), sb.toString());
        Cli.Result r = Cli.run(dir, "run", "--slots", "1", "--json", "--halt", "soon,fail=2", file.toString());
        assertThat(r.exit()).isEqualTo(1);
        JsonNode s = JSON.readTree(r.stdout());
        assertThat(s.get("failed").asInt()).isEqualTo(2);
        assertThat(s.get("cancelled").asInt()).as("not started after the halt").isPositive();
        assertThat(s.get("succeeded").asInt() + s.get("cancelled").asInt()).isEqualTo(60);
        assertThat(s.get("lost").asInt()).isZero();
        assertThat(s.get("halted").asText()).isEqualTo("soon,fail=2");
        assertThat(r.stderr()).contains("halting (--halt soon,fail=2): 2 task(s) failed; nothing more starts");
    }

    @Test
    void haltNowCancelsTheRunningTasksToo() throws Exception {
        Path file = Files.writeString(dir.resolve("now.txt"), "sleep 60\nsleep 60\nsleep 0.5; exit 9\nsleep 60\n");
        Cli.Result r = Cli.run(dir, "run", "--slots", "3", "--halt", "now,fail=1", file.toString());
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.stderr()).contains("halting (--halt now,fail=1): 1 task(s) failed; the unfinished tasks are "
                + "cancelled").contains("4 tasks: 0 succeeded, 1 failed, 3 cancelled")
                .contains("halted early (--halt now,fail=1)");
        // bad values are refused before anything runs
        Cli.Result bad = Cli.run(dir, "run", "--halt", "sometimes", file.toString());
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.stderr()).contains("--halt must be never, soon,fail=N or now,fail=N");
    }

    @Test
    void aRunWhoseExecutorsAllExitStopsWithTheReasonInsteadOfWaitingForEver() throws Exception {
        // the first task kills the only executor (its parent); nothing is left to run the others
        Path file = Files.writeString(dir.resolve("kill.txt"), "kill -9 $PPID\ntrue\ntrue\n");
        Cli.Result r = Cli.run(dir, "run", "--slots", "1", "--json", file.toString());
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.stderr()).contains("stopping: local executor 0 exited unexpectedly with status 137 (killed by "
                + "signal 9); the unfinished tasks are cancelled");
        JsonNode s = JSON.readTree(r.stdout());
        assertThat(s.get("stopped").asText()).startsWith("local executor 0 exited unexpectedly with status 137");
        assertThat(s.get("succeeded").asInt()).isZero();
        assertThat(s.get("cancelled").asInt() + s.get("lost").asInt()).isEqualTo(3);
    }

    @Test
    void whenOneOfTwoExecutorsExitsTheOtherRunsItsTasks() throws Exception {
        // kills its executor the first time only: retried on the other, it succeeds
        Path marker = dir.resolve("killed-once");
        Path file = Files.writeString(dir.resolve("once.txt"), "[ -e " + marker + " ] || { touch " + marker
                + "; kill -9 $PPID; }\ntrue\ntrue\ntrue\n");
        Cli.Result r = Cli.run(dir, "run", "--executors", "2", "--slots", "1", "--json", file.toString());
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(JSON.readTree(r.stdout()).get("succeeded").asInt()).isEqualTo(4);
        assertThat(r.stderr()).contains("exited unexpectedly with status 137 (killed by signal 9); 1 left");
    }

    @Test
    void aTaskOverTheDispatchersLimitFailsWithItsReasonAndTheOthersRun() throws Exception {
        // 100,000 arguments: 1.4 MB encoded, over the embedded dispatcher's 1 MiB per task
        Path file = dir.resolve("big-task.jsonl");
        Files.writeString(file, "{\"args\": [\"/bin/echo\"" + ", \"xxxxxxxxxx\"".repeat(100_000) + "]}\n"
                + "{\"shell\": \"echo ok2\"}\n" + "{\"shell\": \"echo ok3\"}\n");
        Cli.Result r = Cli.run(dir, "run", "--keep-order", file.toString());
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.stdout()).isEqualTo("ok2\nok3\n");
        assertThat(r.stderr()).contains("line 1: refused by the dispatcher: ")
                .contains("over the limit of 1048576 bytes per task (falkon dispatcher --max-task-bytes)")
                .contains("3 tasks: 2 succeeded, 1 failed").doesNotContain("lost").doesNotContain("LOST");
    }

    @Test
    void aLineNoDispatcherCouldTakeStopsTheCommandNamingItAndNothingRuns() throws Exception {
        Path file = dir.resolve("huge.txt");
        try (var w = Files.newBufferedWriter(file)) {
            w.write("touch ran\n");
            w.write("echo " + "z".repeat(20 << 20) + "\n");
        }
        for (String command : List.of("run", "submit")) {
            List<String> args = new ArrayList<>(List.of(command));
            if (command.equals("submit")) {
                args.addAll(List.of("--dispatcher", "127.0.0.1:1")); // checked before any connection
            }
            args.add(file.toString());
            Cli.Result r = Cli.run(dir, args.toArray(String[]::new));
            assertThat(r.exit()).as(command).isEqualTo(2);
            assertThat(r.stderr().strip()).as(command).startsWith("falkon " + command + ": " + file + ":2: a line of "
                    + (5 + (20 << 20)) + " characters").doesNotContain("Exception").doesNotContain("\tat ");
            assertThat(dir.resolve("ran")).doesNotExist();
        }
        // from standard input, read as it comes: what came before ran, then the same one line
        Cli.Result piped = Cli.runWithInput(dir, "echo before\n" + "echo " + "z".repeat(20 << 20) + "\n", "run", "-");
        assertThat(piped.exit()).isEqualTo(2);
        assertThat(piped.stderr().strip().lines().filter(l -> l.startsWith("falkon run: <stdin>:2: a line of ")))
                .hasSize(1);
        assertThat(piped.stderr()).doesNotContain("Exception");
    }

    @Test
    void aBadTaskFileLineIsReportedWithItsNumberAndNothingRuns() throws Exception {
        Path file = dir.resolve("bad.jsonl");
        Files.writeString(file, """
                {"shell": "touch ran"}
                # fine so far
                {"shell": "true", "tiemout": 3}
                """);
        Cli.Result r = Cli.run(dir, "run", file.toString());
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr().strip()).isEqualTo("falkon run: " + file + ":3: unknown field \"tiemout\" "
                + "(known: shell, args, env, dir, timeout, retries, retriesOnFailure, name, after, priority, cores, memory, disk, gpus, resources, inputs, outputs, worker, payload)");
        assertThat(dir.resolve("ran")).doesNotExist();
    }

    @Test
    void noExecModeCompletesWithoutRunningAnything() throws Exception {
        Path file = dir.resolve("touch.txt");
        Files.writeString(file, "touch should-not-exist\n".repeat(100));
        Cli.Result r = Cli.run(dir, "run", "--no-exec", "--json", file.toString());
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(JSON.readTree(r.stdout()).get("succeeded").asInt()).isEqualTo(100);
        assertThat(dir.resolve("should-not-exist")).doesNotExist();
    }

    @Test
    void commandsCanComeFromStandardInput() throws Exception {
        Cli.Result r = Cli.runWithInput(dir, "echo a\necho b\n", "run", "--json", "-");
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(JSON.readTree(r.stdout()).get("tasks").asInt()).isEqualTo(2);
    }

    @Test
    void aDataWorkloadReportsWhereItsInputsCameFrom() throws Exception {
        for (int i = 0; i < 3; i++) {
            Files.write(dir.resolve("obj" + i + ".dat"), new byte[50_000 + i]);
        }
        StringBuilder tasks = new StringBuilder();
        for (int i = 0; i < 60; i++) {
            int k = i % 3;
            tasks.append("{\"shell\": \"wc -c < in.dat\", \"inputs\": [{\"id\": \"obj").append(k)
                    .append("\", \"source\": \"obj").append(k).append(".dat\", \"name\": \"in.dat\"}]}\n");
        }
        Path file = dir.resolve("data.jsonl");
        Files.writeString(file, tasks);
        Path results = dir.resolve("r.jsonl");
        Cli.Result r = Cli.run(dir, "run", "--executors", "2", "--policy", "gcc", "--cache-size", "10m",
                "--json", "--results", results.toString(), file.toString());
        assertThat(r.exit()).as(r.stderr()).isZero();
        JsonNode data = JSON.readTree(r.stdout()).get("data");
        assertThat(data.get("localHits").asInt() + data.get("peerHits").asInt() + data.get("misses").asInt())
                .isEqualTo(60);
        assertThat(data.get("misses").asInt()).isLessThanOrEqualTo(6);
        assertThat(Files.readAllLines(results)).hasSize(60).allSatisfy(line -> {
            JsonNode n = Cli2.parse(line);
            int k = (n.get("line").asInt() - 1) % 3;
            assertThat(n.get("stdout").asText().trim()).isEqualTo(Integer.toString(50_000 + k));
        });
    }

    @Test
    void aBadInputDeclarationNamesTheLineAndTheField() throws Exception {
        Path file = dir.resolve("bad-inputs.jsonl");
        Files.writeString(file, "{\"shell\": \"true\", \"inputs\": [{\"id\": \"x\", \"unpack\": \"rar\"}]}\n");
        Cli.Result r = Cli.run(dir, "run", file.toString());
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr().strip()).isEqualTo("falkon run: " + file + ":1: \"inputs\"[0]: unknown unpack mode "
                + "'rar' (none, gzip, tar, tar.gz)");
    }

    /** JSON parsing that fails the test instead of throwing checked exceptions. */
    static final class Cli2 {
        static JsonNode parse(String line) {
            try {
                return JSON.readTree(line);
            } catch (Exception e) {
                throw new AssertionError("not JSON: " + line, e);
            }
        }
    }
}
