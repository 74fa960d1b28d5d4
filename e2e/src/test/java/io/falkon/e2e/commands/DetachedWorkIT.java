package io.falkon.e2e.commands;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Detached work end to end, every command its own process against a real dispatcher and executor:
 * submit and go away, list, wait, fetch the results later (again, and after the dispatcher
 * restarted from its journal), rerun exactly what failed, cancel.
 */
class DetachedWorkIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<Integer> FAILING = Set.of(4, 11, 17);

    @TempDir
    Path dir;

    /** 20 tasks, one per line; each notes its line in ran.log; lines 4, 11, 17 fail until fixed exists. */
    private Path taskFile() throws Exception {
        Path ran = dir.resolve("ran.log");
        Path fixed = dir.resolve("fixed");
        StringBuilder sb = new StringBuilder();
        for (int line = 1; line <= 20; line++) {
            sb.append("echo ").append(line).append(" >> ").append(ran).append("; echo out-").append(line)
                    .append(FAILING.contains(line) ? "; test -e " + fixed : "").append('\n');
        }
        return Files.writeString(dir.resolve("tasks.txt"), sb.toString());
    }

    private Set<Integer> ranLines() throws Exception {
        return Files.readAllLines(dir.resolve("ran.log")).stream().map(String::trim).map(Integer::parseInt)
                .collect(Collectors.toSet());
    }

    private static Set<Integer> linesOf(String jsonLines) {
        return jsonLines.lines().map(l -> {
            try {
                return JSON.readTree(l).get("line").asInt();
            } catch (Exception e) {
                throw new AssertionError("not a result line: " + l, e);
            }
        }).collect(Collectors.toSet());
    }

    @Test
    void resultsListsAndExtractsOneTasksArchivedOutputsCheckedAgainstTheirChecksums() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store"));
        StringBuilder lines = new StringBuilder();
        for (int i = 1; i <= 6; i++) {
            lines.append("{\"shell\": \"echo score-").append(i).append(" > s.txt\", \"outputs\": [{\"path\": \"s.txt\", ")
                    .append("\"id\": \"scores/").append(i).append("\", \"archive\": true}]}\n");
        }
        Path tasks = Files.writeString(dir.resolve("archived.jsonl"), lines);
        int port = ClusterProcesses.freePort();
        String addr = "127.0.0.1:" + port;
        try (ClusterProcesses c = new ClusterProcesses(dir)) {
            c.dispatcher(port);
            c.executor(port, "a1", "--slots", "2", "--store", store.toString());
            Cli.Result submitted = Cli.run(dir, "submit", "--dispatcher", addr, "--detach", "--json", tasks.toString());
            assertThat(submitted.exit()).as(submitted.stderr()).isZero();
            String id = JSON.readTree(submitted.stdout()).get("instance").asText();
            assertThat(Cli.run(dir, "wait", id).exit()).isZero();
            assertThat(store.resolve("scores")).as("no file of its own").doesNotExist();

            Cli.Result listed = Cli.run(dir, "results", id, "--line", "4", "--files", "-q");
            assertThat(listed.exit()).as(listed.stderr()).isZero();
            assertThat(listed.stdout()).containsPattern("line 4: scores/4  archives/a1-[0-9]+-[0-9]+-1\\.tar @[0-9]+ "
                    + "\\(8 bytes\\)");
            Path out = dir.resolve("out");
            Cli.Result extracted = Cli.run(dir, "results", id, "--line", "4", "--extract", out.toString(), "--store",
                    store.toString(), "-q");
            assertThat(extracted.exit()).as(extracted.stderr()).isZero();
            assertThat(out.resolve("scores/4")).hasContent("score-4");
            assertThat(out.resolve("scores/3")).as("only the task asked for").doesNotExist();
            Cli.Result again = Cli.run(dir, "results", id, "--line", "4", "--extract", out.toString(), "--store",
                    store.toString(), "-q");
            assertThat(again.exit()).as("the same bytes again: nothing to change").isZero();
            // a file of the user's in the way is never overwritten, and a link in DIR is never followed out
            Files.writeString(out.resolve("scores/4"), "mine\n");
            Cli.Result over = Cli.run(dir, "results", id, "--line", "4", "--extract", out.toString(), "--store",
                    store.toString(), "-q");
            assertThat(over.exit()).isNotZero();
            assertThat(over.stderr()).contains("exists and holds something else: not overwritten");
            assertThat(out.resolve("scores/4")).hasContent("mine");
            Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
            Path linked = dir.resolve("linked");
            Files.createDirectories(linked);
            Files.createSymbolicLink(linked.resolve("scores"), elsewhere);
            Cli.Result out2 = Cli.run(dir, "results", id, "--line", "3", "--extract", linked.toString(), "--store",
                    store.toString(), "-q");
            assertThat(out2.exit()).isNotZero();
            assertThat(out2.stderr()).contains("through a symbolic link");
            try (var none = Files.list(elsewhere)) {
                assertThat(none).as("nothing written through the link").isEmpty();
            }

            // a changed archive is caught, not copied out
            Path archive;
            try (var files = Files.list(store.resolve("archives"))) {
                archive = files.findFirst().orElseThrow();
            }
            String all = Files.readString(archive, java.nio.charset.StandardCharsets.ISO_8859_1);
            Files.writeString(archive, all.replace("score-5", "SCORE-5"), java.nio.charset.StandardCharsets.ISO_8859_1);
            Cli.Result refused = Cli.run(dir, "results", id, "--line", "5", "--extract", out.toString(), "--store",
                    store.toString(), "-q");
            assertThat(refused.exit()).isNotZero();
            assertThat(refused.stderr()).contains("does not match its SHA-256");
            assertThat(out.resolve("scores/5")).doesNotExist();
        }
    }

    @Test
    void detachedWorkIsListedWaitedForFetchedLaterEvenAfterARestartAndItsFailuresRerun() throws Exception {
        Path tasks = taskFile();
        Path journal = dir.resolve("journal");
        int port = ClusterProcesses.freePort();
        String addr = "127.0.0.1:" + port;
        try (ClusterProcesses c = new ClusterProcesses(dir)) {
            Process dispatcher = c.dispatcher(port, "--journal", journal.toString());
            c.executor(port, "e1", "--slots", "2");

            Cli.Result submitted = Cli.run(dir, "submit", "--dispatcher", addr, "--detach", "--json",
                    tasks.toString());
            assertThat(submitted.exit()).as(submitted.stderr()).isZero();
            JsonNode s = JSON.readTree(submitted.stdout());
            String id = s.get("instance").asText();
            assertThat(s.get("tasks").asInt()).isEqualTo(20);
            assertThat(s.get("key").asText()).startsWith(id + "-");

            // waited for by a process of its own: exit 1, as three tasks failed
            Cli.Result waited = Cli.run(dir, "wait", id.substring(0, 6));
            assertThat(waited.exit()).as(waited.stderr()).isEqualTo(1);
            assertThat(waited.stdout()).contains("20 tasks: 17 succeeded, 3 failed").contains("0 unfinished");
            assertThat(ranLines()).isEqualTo(IntStream.rangeClosed(1, 20).boxed().collect(Collectors.toSet()));

            JsonNode listed = JSON.readTree(Cli.run(dir, "list", "--dispatcher", addr, "--json").stdout());
            assertThat(listed).hasSize(1);
            assertThat(listed.get(0).get("instance").asText()).isEqualTo(id);
            assertThat(listed.get(0).get("attached").asBoolean()).isFalse();
            assertThat(listed.get(0).get("completed").asInt()).isEqualTo(20);

            // results: every task's output whole; the failures by line; fetched twice, still there
            Cli.Result all = Cli.run(dir, "results", id);
            assertThat(all.exit()).isEqualTo(1);
            for (int line = 1; line <= 20; line++) {
                assertThat(all.stdout()).contains("out-" + line + "\n");
            }
            assertThat(all.stderr()).contains("line 4: exit 1").contains("line 11: exit 1").contains("line 17: exit 1");
            Cli.Result failed = Cli.run(dir, "results", id, "--failed", "--json");
            assertThat(linesOf(failed.stdout())).isEqualTo(FAILING);
            assertThat(failed.stdout().lines()).allSatisfy(l -> assertThat(l).contains("\"succeeded\":false"));
            Cli.Result one = Cli.run(dir, "results", id, "--line", "11", "--json");
            assertThat(linesOf(one.stdout())).containsExactly(11);
            assertThat(JSON.readTree(one.stdout()).get("command").asText()).contains("echo out-11");

            // the dispatcher dies; restarted from its journal, it still has the instance and its results
            ClusterProcesses.kill9(dispatcher);
            c.dispatcher(port, "--journal", journal.toString());
            Cli.Result afterRestart = Cli.run(dir, "results", id, "--failed", "--json");
            assertThat(afterRestart.exit()).as(afterRestart.stderr()).isEqualTo(1);
            assertThat(linesOf(afterRestart.stdout())).isEqualTo(FAILING);

            // rerun exactly the failed ones (the executor reconnects to the new dispatcher by itself)
            Files.delete(dir.resolve("ran.log"));
            Files.createFile(dir.resolve("fixed"));
            Cli.Result rerun = Cli.run(dir, "submit", "--dispatcher", addr, "--json", "--rerun-failed", id,
                    tasks.toString());
            assertThat(rerun.exit()).as(rerun.stderr()).isZero();
            assertThat(rerun.stderr()).contains("rerunning 3 of the 20 tasks");
            assertThat(JSON.readTree(rerun.stdout()).get("succeeded").asInt()).isEqualTo(3);
            assertThat(ranLines()).isEqualTo(FAILING);

            Cli.Result cancelled = Cli.run(dir, "cancel", id);
            assertThat(cancelled.exit()).as(cancelled.stderr()).isZero();
            assertThat(JSON.readTree(Cli.run(dir, "list", "--dispatcher", addr, "--json").stdout())).isEmpty();
            Cli.Result gone = Cli.run(dir, "results", id);
            assertThat(gone.exit()).isEqualTo(2);
            assertThat(gone.stderr()).contains("instance " + id + " was cancelled at");
        }
    }

    @Test
    void theRerunTheSubmitPrintsRunsTheSameTasksItsTemplateMade() throws Exception {
        // each line is an exit code; the template makes the command: the raw lines are not commands
        Path codes = Files.writeString(dir.resolve("codes.txt"), "0\n3\n0\n5\n");
        int port = ClusterProcesses.freePort();
        String addr = "127.0.0.1:" + port;
        try (ClusterProcesses c = new ClusterProcesses(dir)) {
            c.dispatcher(port);
            c.executor(port, "e1", "--slots", "2");
            Cli.Result submitted = Cli.run(dir, "submit", "--dispatcher", addr, "--detach", "--template",
                    "echo ran {}; exit {}", codes.toString());
            assertThat(submitted.exit()).as(submitted.stderr()).isZero();
            String id = submitted.stdout().substring("instance ".length(), submitted.stdout().indexOf(':'));
            assertThat(Cli.run(dir, "wait", id).exit()).isEqualTo(1);

            // the follow-up as printed, word for word
            String printed = submitted.stdout().lines().filter(l -> l.contains("--rerun-failed")).findFirst()
                    .orElseThrow().split("  #")[0].strip();
            assertThat(printed).isEqualTo("falkon submit --dispatcher " + addr + " --rerun-failed " + id + " " + codes);
            Cli.Result rerun = Cli.run(dir, printed.substring("falkon ".length()).split(" "));
            assertThat(rerun.exit()).isEqualTo(1);
            assertThat(rerun.stderr()).contains("rerunning 2 of the 4 tasks")
                    .contains("rerunning with the template instance " + id + " was submitted with")
                    // the template was applied: no line failed as a command not found (the temporary
                    // directory's random name may well contain the digits 127)
                    .contains("line 2: exit 3").contains("line 4: exit 5").doesNotContain("exit 127");
            assertThat(rerun.stdout().lines()).containsExactlyInAnyOrder("ran 3", "ran 5");

            // another template would run other commands under the same lines: refused
            Cli.Result other = Cli.run(dir, "submit", "--dispatcher", addr, "--rerun-failed", id, "--template",
                    "exit 0", codes.toString());
            assertThat(other.exit()).isEqualTo(2);
            assertThat(other.stderr()).contains("--template 'exit 0' is not what instance " + id + " ran its lines "
                    + "with (--template 'echo ran {}; exit {}')");
        }
    }

    @Test
    void singleTasksAreCancelledByTheirNumbersAndTheRestRunsOn() throws Exception {
        Path tasks = Files.writeString(dir.resolve("mixed.txt"), "sleep 600\necho two\nsleep 600\necho four\n");
        int port = ClusterProcesses.freePort();
        String addr = "127.0.0.1:" + port;
        try (ClusterProcesses c = new ClusterProcesses(dir)) {
            c.dispatcher(port);
            c.executor(port, "one-slot", "--slots", "1", "--prefetch", "0");
            Cli.Result submitted = Cli.run(dir, "submit", "--dispatcher", addr, "--detach", tasks.toString());
            assertThat(submitted.exit()).as(submitted.stderr()).isZero();
            String id = submitted.stdout().substring("instance ".length(), submitted.stdout().indexOf(':'));
            await().atMost(Duration.ofSeconds(60)).until(() -> JSON.readTree(Cli.run(dir, "status", "--json",
                    "--dispatcher", addr).stdout()).path("running").asInt() == 1); // task 1 holds the one slot

            Cli.Result outOfRange = Cli.run(dir, "cancel", id, "--task", "5");
            assertThat(outOfRange.exit()).isEqualTo(2);
            assertThat(outOfRange.stderr()).contains("--task 5: the instance's tasks are numbered 1..4");
            Cli.Result cancelled = Cli.run(dir, "cancel", id, "--task", "1,3");
            assertThat(cancelled.exit()).as(cancelled.stderr()).isZero();
            assertThat(cancelled.stdout()).contains("2 of tasks 1, 3 cancelled (all unfinished); the instance goes on");

            Cli.Result waited = Cli.run(dir, "wait", id, "--timeout", "120");
            assertThat(waited.exit()).as("two were cancelled: %s", waited.stdout()).isEqualTo(1);
            Map<Integer, String> status = new java.util.TreeMap<>();
            for (String l : Cli.run(dir, "results", id, "--json").stdout().lines().toList()) {
                JsonNode r = JSON.readTree(l);
                status.put(r.get("task").asInt(), r.get("status").asText() + ":" + r.get("stdout").asText().strip());
            }
            assertThat(status).containsExactly(Map.entry(1, "CANCELLED:"), Map.entry(2, "EXITED:two"),
                    Map.entry(3, "CANCELLED:"), Map.entry(4, "EXITED:four"));
            Cli.Result again = Cli.run(dir, "cancel", id, "--task", "2", "--json");
            assertThat(JSON.readTree(again.stdout()).get("cancelled").asInt()).as("task 2 had finished").isZero();
        }
    }

    @Test
    void aRunningDetachedInstanceIsWaitedForWithATimeoutAndCancelled() throws Exception {
        Path tasks = Files.writeString(dir.resolve("slow.txt"), "sleep 60\n".repeat(4));
        int port = ClusterProcesses.freePort();
        String addr = "127.0.0.1:" + port;
        try (ClusterProcesses c = new ClusterProcesses(dir)) {
            c.dispatcher(port);
            c.executor(port, "e1", "--slots", "2");
            Cli.Result submitted = Cli.run(dir, "submit", "--dispatcher", addr, "--detach", tasks.toString());
            assertThat(submitted.exit()).as(submitted.stderr()).isZero();
            String id = submitted.stdout().substring("instance ".length(), submitted.stdout().indexOf(':'));
            assertThat(submitted.stdout()).contains("falkon wait " + id).contains("--rerun-failed " + id);

            Cli.Result waited = Cli.run(dir, "wait", id, "--timeout", "1");
            assertThat(waited.exit()).as("docs/cli.md: wait exits 124 when its timeout passes first").isEqualTo(124);
            assertThat(waited.stdout()).contains("4 unfinished");

            Cli.Result cancelled = Cli.run(dir, "cancel", id, "--json");
            assertThat(cancelled.exit()).as(cancelled.stderr()).isZero();
            assertThat(JSON.readTree(cancelled.stdout()).get("cancelled").asInt()).isEqualTo(4);
            assertThat(JSON.readTree(Cli.run(dir, "status", "--json", "--dispatcher", addr).stdout())
                    .get("instances").asInt()).isZero();
            assertThat(Files.exists(Cli.home(dir).resolve("instances").resolve(id + ".json"))).isFalse();
            // a second cancel is told what happened, not that the id is unknown
            Cli.Result again = Cli.run(dir, "cancel", id);
            assertThat(again.exit()).isEqualTo(2);
            assertThat(again.stderr().strip()).startsWith("falkon cancel: instance " + id + " was cancelled at ")
                    .endsWith("(falkon cancel): its tasks were stopped and its results are gone");
            assertThat(Cli.run(dir, "wait", id.substring(0, 5)).stderr()).contains("was cancelled at");
        }
    }

    @Test
    void resultsBeyondTheirShareOfMemoryAreSpilledToDiskAndAllFetchedLater() throws Exception {
        // 1,200 results of 32 KiB each (about 38 MiB) against a 64 MiB budget: a quarter is 16 MiB
        Path tasks = Files.writeString(dir.resolve("big.txt"),
                "yes x | head -c 32768; echo\n".repeat(1200));
        int port = ClusterProcesses.freePort();
        String addr = "127.0.0.1:" + port;
        try (ClusterProcesses c = new ClusterProcesses(dir)) {
            c.dispatcher(port, "--max-memory", "64", "--max-spill", "256");
            c.executor(port, "e1", "--slots", "2");
            Cli.Result submitted = Cli.run(dir, "submit", "--dispatcher", addr, "--detach", "--json", tasks.toString());
            assertThat(submitted.exit()).as(submitted.stderr()).isZero();
            String id = JSON.readTree(submitted.stdout()).get("instance").asText();
            assertThat(Cli.run(dir, "wait", id).exit()).isZero();
            JsonNode status = JSON.readTree(Cli.run(dir, "status", "--json", "--dispatcher", addr).stdout());
            assertThat(status.at("/memory/spilledResultBytes").asLong()).isGreaterThan(16L << 20);

            Cli.Result all = Cli.run(dir, "results", id, "--json");
            assertThat(all.exit()).as(all.stderr()).isZero();
            List<JsonNode> rows = all.stdout().lines().map(l -> {
                try {
                    return JSON.readTree(l);
                } catch (Exception e) {
                    throw new AssertionError(l, e);
                }
            }).toList();
            assertThat(rows).hasSize(1200);
            assertThat(rows).extracting(r -> r.get("stdout").asText().length()).containsOnly(32769);
            assertThat(rows.stream().map(r -> r.get("task").asInt()).collect(Collectors.toSet())).hasSize(1200);
        }
    }
}
