package io.falkon.e2e.commands;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.abort;

/**
 * The Montage mosaic of M13 as one task file (examples/montage), with the real Montage programs on
 * a real image: every task starts after the tasks it reads from finish, the mosaic equals a serial
 * run of the same commands byte for byte, the fitted background corrections recover the planted
 * offsets; a failed difference stops what needs it and a rerun runs exactly that; a file that
 * cannot run is refused before anything runs; a dispatcher killed mid-workflow and restarted from
 * its journal gives the same mosaic. Montage comes from Debian (the test setup installs it) and
 * m13.fits from the astropy wheel on PyPI; without them the test is skipped, saying so.
 */
class MontageIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();
    private static final Path SCRIPT = ROOT.resolve("examples/montage/montage.py");
    private static Path m13;

    @TempDir
    Path dir;

    @RegisterExtension
    final LogsOnFailure logs = new LogsOnFailure(() -> dir);

    @BeforeAll
    static void montage() throws Exception {
        try {
            DebianPackages.ensure("mProjectPP", "montage");
        } catch (AssertionError e) {
            abort("MontageIT skipped: Montage is not installed and could not be (apt-get install montage, as root)");
        }
        Process p = new ProcessBuilder("python3", SCRIPT.toString(), "fetch", ROOT.resolve("target/montage-cache")
                .toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (!p.waitFor(10, TimeUnit.MINUTES) || p.exitValue() != 0) {
            abort("MontageIT skipped: m13.fits could not be fetched from the astropy wheel on PyPI: " + out);
        }
        m13 = Path.of(out.lines().reduce((a, b) -> b).orElseThrow());
    }

    private static String script(Path cwd, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("python3", SCRIPT.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(cwd.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(10, TimeUnit.MINUTES)).isTrue();
        assertThat(p.exitValue()).as("montage.py %s: %s", String.join(" ", args), out).isZero();
        return out;
    }

    /** A 3 x 3 mosaic's workflow in {@code wf}, and its serial reference. */
    private Path generate(String name, double pace, String... options) throws Exception {
        Path wf = dir.resolve(name);
        List<String> args = new ArrayList<>(List.of("generate", wf.toString(), "--tiles", "3", "--pace",
                Double.toString(pace), "--m13", m13.toString()));
        args.addAll(List.of(options));
        script(dir, args.toArray(String[]::new));
        script(wf, "serial", wf.toString());
        return wf;
    }

    private static List<JsonNode> tasks(Path wf) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        for (String l : Files.readAllLines(wf.resolve("workflow.jsonl"))) {
            out.add(JSON.readTree(l));
        }
        return out;
    }

    private static Map<Integer, JsonNode> results(Path file) throws Exception {
        Map<Integer, JsonNode> byLine = new HashMap<>();
        for (String l : Files.readAllLines(file)) {
            JsonNode n = JSON.readTree(l);
            byLine.put(n.get("line").asInt(), n); // the last result of a line counts
        }
        return byLine;
    }

    /** Lines (from 1) of the tasks each task reads from: the producers of its inputs. */
    private static Map<Integer, Set<Integer>> producers(List<JsonNode> tasks) {
        Map<String, Integer> producerOf = new HashMap<>();
        for (int i = 0; i < tasks.size(); i++) {
            for (JsonNode o : tasks.get(i).path("outputs")) {
                producerOf.put(o.get("id").asText(), i + 1);
            }
        }
        Map<Integer, Set<Integer>> needs = new HashMap<>();
        for (int i = 0; i < tasks.size(); i++) {
            Set<Integer> p = new TreeSet<>();
            for (JsonNode in : tasks.get(i).path("inputs")) {
                Integer line = producerOf.get(in.get("id").asText());
                if (line != null) {
                    p.add(line);
                }
            }
            needs.put(i + 1, p);
        }
        return needs;
    }

    private static int line(List<JsonNode> tasks, String name) {
        for (int i = 0; i < tasks.size(); i++) {
            if (tasks.get(i).get("name").asText().equals(name)) {
                return i + 1;
            }
        }
        throw new AssertionError("no task " + name);
    }

    @Test
    void oneTaskFileMakesTheMosaicOfASerialRunInDependencyOrder() throws Exception {
        Path wf = generate("ok", 0);
        Cli.Result r = Cli.run(wf, "run", "-q", "--store", ".", "--results", "results.jsonl", "workflow.jsonl");
        assertThat(r.exit()).as(r.stderr()).isZero();
        List<JsonNode> tasks = tasks(wf);
        Map<Integer, JsonNode> res = results(wf.resolve("results.jsonl"));
        assertThat(res).hasSize(tasks.size());
        producers(tasks).forEach((consumer, ps) -> {
            for (int p : ps) {
                assertThat(res.get(consumer).get("startedMicros").asLong())
                        .as("%s starts after %s finished", tasks.get(consumer - 1).get("name"), tasks.get(p - 1).get("name"))
                        .isGreaterThanOrEqualTo(res.get(p).get("finishedMicros").asLong());
            }
        });
        assertThat(script(wf, "check", wf.toString())).contains("mosaic == the serial reference")
                .contains("fitted corrections recover the planted offsets");
    }

    @Test
    void aFailedDifferenceStopsWhatNeedsItAndTheRerunRunsExactlyThat() throws Exception {
        Path wf = generate("fail", 0);
        List<JsonNode> tasks = tasks(wf);
        int broken = line(tasks, "diff-t_0_0-t_0_1");
        String original = Files.readString(wf.resolve("workflow.jsonl"));
        ((ObjectNode) tasks.get(broken - 1)).put("shell", "exit 1");
        StringBuilder failing = new StringBuilder();
        for (JsonNode t : tasks) {
            failing.append(t).append('\n');
        }
        Files.writeString(wf.resolve("workflow.jsonl"), failing);
        Cli.Result r = Cli.run(wf, "run", "-q", "--store", ".", "--results", "results.jsonl", "workflow.jsonl");
        assertThat(r.exit()).isEqualTo(1);
        Map<Integer, JsonNode> res = results(wf.resolve("results.jsonl"));
        Set<String> notRun = new TreeSet<>();
        for (int i = 1; i <= tasks.size(); i++) {
            String name = tasks.get(i - 1).get("name").asText();
            String status = res.get(i).get("status").asText();
            if (i == broken) {
                assertThat(res.get(i).get("exitCode").asInt()).isEqualTo(1);
            } else if (name.startsWith("project-") || name.startsWith("diff-") || name.equals("images")
                    || name.equals("overlaps")) {
                assertThat(status).as(name).isEqualTo("EXITED");
                assertThat(res.get(i).get("succeeded").asBoolean()).as(name).isTrue();
            } else {
                assertThat(status).as(name).isEqualTo("DEPENDENCY_FAILED");
                notRun.add(name);
            }
        }
        assertThat(notRun).contains("fit", "model", "background-t_1_1", "corrected", "add").hasSize(13);
        assertThat(r.stderr()).contains("line " + line(tasks, "fit") + ": not run: line " + broken
                + " did not succeed (it needs 'diffs/diff.000000.000001.fits')");
        assertThat(wf.resolve("mosaic.fits")).doesNotExist();

        // fixed: the rerun runs the failed difference and the 13 tasks after it, nothing else
        Files.writeString(wf.resolve("workflow.jsonl"), original);
        Cli.Result again = Cli.run(wf, "run", "-q", "--store", ".", "--rerun-failed", "results.jsonl", "--results",
                "results.jsonl", "workflow.jsonl");
        assertThat(again.exit()).as(again.stderr()).isZero();
        assertThat(again.stderr()).contains("rerunning 14 of the " + tasks.size() + " tasks");
        assertThat(script(wf, "check", wf.toString())).contains("mosaic == the serial reference");
    }

    @Test
    void aWorkflowThatCannotRunIsRefusedBeforeAnyTaskRuns() throws Exception {
        Path wf = generate("refused", 0);
        List<JsonNode> tasks = tasks(wf);
        // a typo in one input id: no task produces it, the store does not hold it
        int typo = line(tasks, "fit");
        String text = Files.readString(wf.resolve("workflow.jsonl"));
        String typoed = text.replace("\"tables/diffs.tbl\", \"readOnly\": true}, {\"id\": \"diffs/",
                "\"tables/difs.tbl\", \"readOnly\": true}, {\"id\": \"diffs/");
        assertThat(typoed).as("the fit task's input, typed wrong").isNotEqualTo(text);
        Files.writeString(wf.resolve("typo.jsonl"), typoed);
        Cli.Result r = Cli.run(wf, "run", "-q", "--store", ".", "typo.jsonl");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr()).contains("typo.jsonl:" + typo + ": its input 'tables/difs.tbl' is an output of no task");
        // a cycle: the first projection made to wait for the mosaic
        Files.writeString(wf.resolve("cycle.jsonl"), text.replaceFirst("\"name\": \"project-t_0_0\",",
                "\"name\": \"project-t_0_0\", \"after\": [\"add\"],"));
        Cli.Result c = Cli.run(wf, "run", "-q", "--store", ".", "cycle.jsonl");
        assertThat(c.exit()).isEqualTo(2);
        assertThat(c.stderr()).contains("cycle.jsonl:").contains("a cycle: line ");
        assertThat(wf.resolve("proj")).as("nothing ran").doesNotExist();
    }

    @Test
    void intermediatesMarkedTemporaryStayOnTheExecutorsAndOnlyTheMosaicAndTablesReachTheStore() throws Exception {
        Path wf = generate("temporary", 0, "--temporary");
        // no --policy: with a cache, falkon run's default is data-aware (good-cache-compute)
        Cli.Result r = Cli.run(wf, "run", "-q", "--store", ".", "--executors", "2", "--cache-size", "256m",
                "--json", "--results", "results.jsonl", "workflow.jsonl");
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(script(wf, "check", wf.toString())).contains("mosaic == the serial reference");
        for (String intermediate : List.of("proj", "diffs", "corr")) {
            assertThat(wf.resolve(intermediate)).as("never written to the store").doesNotExist();
        }
        long kept = Files.size(wf.resolve("mosaic.fits")) + Files.size(wf.resolve("mosaic_area.fits"));
        try (var tables = Files.list(wf.resolve("tables"))) {
            kept += tables.mapToLong(f -> f.toFile().length()).sum();
        }
        JsonNode data = JSON.readTree(r.stdout().lines().reduce((a, b) -> b).orElseThrow()).get("data");
        assertThat(data.get("bytesWritten").asLong()).as("bytes written to the store: the mosaic and the tables")
                .isBetween(kept * 95 / 100, kept * 105 / 100);
        // the gathers read every difference and corrected tile from a cache, this executor's or its peer's
        List<JsonNode> tasks = tasks(wf);
        Map<Integer, JsonNode> res = results(wf.resolve("results.jsonl"));
        for (String gather : List.of("fit", "add")) {
            JsonNode task = tasks.get(line(tasks, gather) - 1);
            long temporaries = 0;
            for (JsonNode in : task.get("inputs")) {
                temporaries += in.get("id").asText().startsWith("diffs/") || in.get("id").asText().startsWith("corr/")
                        ? 1 : 0;
            }
            JsonNode counts = res.get(line(tasks, gather)).get("data");
            assertThat(counts.get("localHits").asLong() + counts.get("peerHits").asLong()).as(gather)
                    .isGreaterThanOrEqualTo(temporaries);
        }
    }

    @Test
    void anExecutorKilledWhileTheDifferencesRunLosesIntermediatesThatAreMadeAgainForTheSameMosaic() throws Exception {
        Path wf = generate("chaos", 0.3, "--temporary"); // paced: the kill lands while the differences run
        int port = ClusterProcesses.freePort();
        String addr = "127.0.0.1:" + port;
        try (ClusterProcesses procs = new ClusterProcesses(dir)) {
            procs.dispatcher(port, "--policy", "gcc");
            String[] cache = {"--slots", "2", "--store", wf.toString(), "--cache-size", "256m", "--cache-host",
                    "127.0.0.1"};
            Process victim = procs.executor(port, "chaos-a", cache);
            procs.executor(port, "chaos-b", cache);
            Process submit = Cli.asUser(new ProcessBuilder(submitCommand(addr)).directory(wf.toFile())
                    .redirectErrorStream(true).redirectOutput(dir.resolve("submit.log").toFile())
                    .redirectInput(new File("/dev/null")), dir).start();
            await().atMost(Duration.ofMinutes(2)).until(() -> completed(addr) >= 12); // projections, tables, a diff
            ClusterProcesses.kill9(victim);
            assertThat(submit.waitFor(5, TimeUnit.MINUTES)).as("never a hang").isTrue();
            assertThat(submit.exitValue()).as(Files.readString(dir.resolve("submit.log"))).isZero();
            assertThat(procs.log("dispatcher")).as("what the killed executor held was made again")
                    .contains("was lost: running task");
        }
        assertThat(script(wf, "check", wf.toString())).contains("mosaic == the serial reference");
        assertThat(wf.resolve("proj")).doesNotExist();
    }

    @Test
    void aDispatcherKilledMidWorkflowAndRestartedFromItsJournalGivesTheSameMosaic() throws Exception {
        Path wf = generate("restart", 0.3); // paced: the kill lands mid-workflow
        int port = ClusterProcesses.freePort();
        String addr = "127.0.0.1:" + port;
        Path journal = dir.resolve("journal");
        try (ClusterProcesses procs = new ClusterProcesses(dir)) {
            Process dispatcher = procs.dispatcher(port, "--journal", journal.toString(), "--fsync", "ALWAYS");
            procs.executor(port, "montage-exec", "--slots", "2", "--store", wf.toString());
            Process submit = Cli.asUser(new ProcessBuilder(submitCommand(addr)).directory(wf.toFile())
                    .redirectErrorStream(true).redirectOutput(dir.resolve("submit.log").toFile())
                    .redirectInput(new File("/dev/null")), dir).start();
            await().atMost(Duration.ofMinutes(2)).until(() -> completed(addr) >= 12);
            ClusterProcesses.kill9(dispatcher);
            procs.dispatcher(port, "--journal", journal.toString(), "--fsync", "ALWAYS");
            assertThat(submit.waitFor(5, TimeUnit.MINUTES)).isTrue();
            assertThat(submit.exitValue()).as(Files.readString(dir.resolve("submit.log"))).isZero();
        }
        assertThat(script(wf, "check", wf.toString())).contains("mosaic == the serial reference");
    }

    @Test
    void aRunStoppedHalfWayAndResumedWithSkipDoneRunsOnlyTheRestForTheSameMosaic() throws Exception {
        Path wf = generate("resume", 0.3); // paced: Ctrl-C lands mid-workflow
        List<JsonNode> tasks = tasks(wf);
        Path results = wf.resolve("results.jsonl");
        List<String> cmd = Cli.falkon(List.of("-XX:TieredStopAtLevel=1"));
        cmd.addAll(List.of("run", "-q", "--store", ".", "--results", "results.jsonl", "--skip-done", "workflow.jsonl"));
        Process run = Cli.asUser(new ProcessBuilder(cmd).directory(wf.toFile()).redirectErrorStream(true)
                .redirectOutput(dir.resolve("run.log").toFile()).redirectInput(new File("/dev/null")), dir).start();
        await().atMost(Duration.ofMinutes(2)).until(() -> Files.exists(results)
                && Files.readAllLines(results).size() >= 12); // projections, tables, some differences
        assertThat(new ProcessBuilder("kill", "-INT", Long.toString(run.pid())).start().waitFor()).isZero();
        assertThat(run.waitFor(2, TimeUnit.MINUTES)).isTrue();
        assertThat(run.exitValue()).as(Files.readString(dir.resolve("run.log"))).isEqualTo(130);
        Set<Integer> doneFirst = new TreeSet<>();
        results(results).forEach((line, r) -> {
            if (r.get("succeeded").asBoolean()) {
                doneFirst.add(line);
            }
        });
        assertThat(doneFirst).as("stopped half-way").hasSizeGreaterThanOrEqualTo(12).hasSizeLessThan(tasks.size());
        assertThat(wf.resolve("mosaic.fits")).doesNotExist();
        int firstLines = Files.readAllLines(results).size();

        Cli.Result resumed = Cli.run(wf, "run", "-q", "--store", ".", "--results", "results.jsonl", "--skip-done",
                "workflow.jsonl");
        assertThat(resumed.exit()).as(resumed.stderr()).isZero();
        List<JsonNode> second = Files.readAllLines(results).subList(firstLines, Files.readAllLines(results).size())
                .stream().map(l -> {
                    try {
                        return JSON.readTree(l);
                    } catch (Exception e) {
                        throw new AssertionError(l, e);
                    }
                }).toList();
        Set<Integer> ranAgain = new TreeSet<>();
        Set<Integer> skipped = new TreeSet<>();
        for (JsonNode r : second) {
            (r.get("status").asText().equals("SKIPPED") ? skipped : ranAgain).add(r.get("line").asInt());
            assertThat(r.get("succeeded").asBoolean()).as(r.toString()).isTrue();
        }
        assertThat(ranAgain).as("nothing that finished before runs again").doesNotContainAnyElementsOf(doneFirst);
        assertThat(skipped).containsAll(doneFirst);
        assertThat(ranAgain.size() + skipped.size()).as("every task once").isEqualTo(tasks.size());
        assertThat(resumed.stderr()).contains(skipped.size() + " skipped (done before)");
        assertThat(script(wf, "check", wf.toString())).contains("mosaic == the serial reference");
    }

    private List<String> submitCommand(String addr) throws Exception {
        List<String> cmd = Cli.falkon(List.of("-XX:TieredStopAtLevel=1"));
        cmd.addAll(List.of("submit", "-q", "--dispatcher", addr, "workflow.jsonl"));
        return cmd;
    }

    private long completed(String addr) throws Exception {
        Cli.Result s = Cli.run(dir, "status", "--json", "--dispatcher", addr);
        return s.exit() == 0 ? JSON.readTree(s.stdout()).path("completed").asLong() : 0;
    }
}
