package io.falkon.e2e.commands;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What users of GNU parallel and HyperQueue reach for first (issue 56): {@code -j N}, {@code :::} and
 * {@code ::::} sources (several: every combination), {@code --array} with {@code {#}} and
 * {@code $FALKON_TASK_INDEX}, through {@code falkon run} and {@code falkon submit} over TCP and WS.
 */
class ParallelIdiomsTest {
    @TempDir
    Path dir;

    private static List<String> sortedLines(String out) {
        return out.lines().sorted().toList();
    }

    @Test
    void runWithJobsAndValuesPrintsWhatGnuParallelPrints() throws Exception {
        Cli.Result r = Cli.run(dir, "run", "-j", "2", "echo {}", ":::", "a", "b", "c");
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(sortedLines(r.stdout())).containsExactly("a", "b", "c");
        assertThat(r.stderr()).contains("3 tasks: 3 succeeded, 0 failed");
        if (Files.isExecutable(Path.of("/usr/bin/parallel"))) { // where GNU parallel is installed: compared
            Cli.Result parallel = Cli.program(dir, 2, "/usr/bin/parallel", "-j", "2", "echo {}", ":::", "a", "b", "c");
            assertThat(sortedLines(r.stdout())).isEqualTo(sortedLines(parallel.stdout()));
        }
    }

    @Test
    void sourcesCombineAsGnuParallelCombinesThemAndValuesNeverBecomeShellSyntax() throws Exception {
        Path values = Files.writeString(dir.resolve("values.txt"), "x y\n$(touch pwned)\n");
        Cli.Result product = Cli.run(dir, "run", "--dry-run", "echo {1}-{2} {#}", ":::", "a", "b", ":::", "1", "2");
        assertThat(product.stdout().lines()).containsExactly("echo a-1 1", "echo a-2 2", "echo b-1 3", "echo b-2 4");
        Cli.Result appended = Cli.run(dir, "run", "-q", "--results", "r.jsonl", "printf '%s|'", "::::",
                values.toString(), ":::", "-n");
        assertThat(appended.exit()).as(appended.stderr()).isZero();
        List<JsonNode> results = Files.readAllLines(dir.resolve("r.jsonl")).stream()
                .map(RunCommandTest.Cli2::parse).toList();
        assertThat(results).extracting(n -> n.get("task").asInt() + ":" + n.get("stdout").asText())
                .containsExactlyInAnyOrder("1:x y|-n|", "2:$(touch pwned)|-n|");
        assertThat(dir.resolve("pwned")).as("a value is data, never a command").doesNotExist();
        Cli.Result commands = Cli.run(dir, "run", ":::", "echo one", "echo two");
        assertThat(sortedLines(commands.stdout())).as("no command: the values are the commands")
                .containsExactly("one", "two");
    }

    @Test
    void anArrayRunsACommandPerIndexWithItsIndexAndNumber() throws Exception {
        Cli.Result r = Cli.run(dir, "run", "--array", "1-7:3,10", "echo $FALKON_TASK_INDEX {#} {}");
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(sortedLines(r.stdout())).containsExactly("1 1 1", "10 4 10", "4 2 4", "7 3 7");
        Cli.Result plain = Cli.run(dir, "run", "--array", "0-2", "echo index=$FALKON_TASK_INDEX");
        assertThat(sortedLines(plain.stdout())).as("a command without {} runs as it is, the index in the variable")
                .containsExactly("index=0", "index=1", "index=2");
    }

    @Test
    void whatCannotBeMadeIsRefusedNamingWhy() throws Exception {
        String[][] cases = {
                {"-j 2 --slots 3", "-j 2 runs that many tasks at once on one local executor: not with --slots"},
                {"--array 5-1", "--array 5-1: '5-1' is not an index or a range"},
                {"--array 1-3", "--array 1-3: a command to run for each index is needed"},
                {"echo :::", "::: (source 1) has no values"},
                {"a.txt b.txt", "one task file, not 2 words (a.txt b.txt)"},
                {"--skip-done echo ::: a", "--skip-done needs a task file; ::: makes its tasks from the command line"},
                {"--template x{} echo ::: a", "--template fills commands from the lines of a file"},
                {"echo :::: missing.txt", ":::: missing.txt: no such file"},
        };
        for (String[] c : cases) {
            List<String> args = new java.util.ArrayList<>(List.of("run"));
            args.addAll(List.of(c[0].split(" ")));
            Cli.Result r = Cli.run(dir, args.toArray(String[]::new));
            assertThat(r.exit()).as(c[0]).isEqualTo(2);
            assertThat(r.stderr()).as(c[0]).contains(c[1]);
        }
    }

    @Test
    void submitMakesArraysAndValuesOverTcpAndWs() throws Exception {
        int port = ClusterProcesses.freePort();
        int wsPort = ClusterProcesses.freePort();
        String addr = "127.0.0.1:" + port;
        String ws = "http://127.0.0.1:" + wsPort + "/axis2/services/Falkon";
        try (ClusterProcesses procs = new ClusterProcesses(dir)) {
            procs.dispatcher(port, "--ws-port", Integer.toString(wsPort));
            procs.executor(port, "arrays", "--slots", "2");
            await().atMost(Duration.ofSeconds(60)).until(() -> new ObjectMapper().readTree(Cli.run(dir, "status",
                    "--json", "--dispatcher", addr).stdout()).at("/executors/registered").asInt() == 1);
            for (List<String> target : List.of(List.of("--dispatcher", addr), List.of("--ws", ws))) {
                List<String> array = new java.util.ArrayList<>(List.of("submit"));
                array.addAll(target);
                array.addAll(List.of("--array", "1-4", "echo $((FALKON_TASK_INDEX * 10))"));
                Cli.Result a = Cli.run(dir, array.toArray(String[]::new));
                assertThat(a.exit()).as(target + ": " + a.stderr()).isZero();
                assertThat(sortedLines(a.stdout())).as("%s", target).containsExactly("10", "20", "30", "40");
                List<String> values = new java.util.ArrayList<>(List.of("submit"));
                values.addAll(target);
                values.addAll(List.of("echo {}", ":::", "x", "y"));
                Cli.Result v = Cli.run(dir, values.toArray(String[]::new));
                assertThat(v.exit()).as(target + ": " + v.stderr()).isZero();
                assertThat(sortedLines(v.stdout())).as("%s", target).containsExactly("x", "y");
            }
        }
    }
}
