package io.falkon.e2e.commands;

import io.falkon.cli.Falkon;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import java.time.Duration;

/** The cluster workflow with separate processes: falkon dispatcher, falkon executor, submit, status. */
class ServiceCommandsTest {
    @TempDir
    Path dir;

    static int freePort() throws Exception {
        return ClusterProcesses.freePort();
    }

    static Process start(Path dir, String... args) throws Exception {
        List<String> cmd = Cli.falkon(List.of("-XX:TieredStopAtLevel=1"));
        cmd.addAll(List.of(args));
        return Cli.asUser(new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectInput(new File("/dev/null")), dir).start();
    }

    @Test
    void dispatcherExecutorsSubmitAndStatusAsSeparateProcesses() throws Exception {
        int port = freePort();
        int wsPort = freePort();
        Process dispatcher = start(dir, "dispatcher", "--host", "127.0.0.1", "--port", Integer.toString(port),
                "--ws-port", Integer.toString(wsPort));
        List<Process> executors = new ArrayList<>();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(dispatcher.getInputStream(),
                    StandardCharsets.UTF_8));
            String line;
            while ((line = out.readLine()) != null && !line.startsWith("falkon dispatcher listening on")) {
                // skip log lines until the dispatcher says where it listens
            }
            assertThat(line).isEqualTo("falkon dispatcher listening on 127.0.0.1:" + port);
            assertThat(out.readLine()).isEqualTo("falkon dispatcher: callers must present the token from "
                    + Cli.home(dir).resolve("token") + " (new)");
            String ws = "http://127.0.0.1:" + wsPort + "/axis2/services/Falkon";
            assertThat(out.readLine()).isEqualTo("falkon dispatcher WS interface at " + ws + " (WSDL: " + ws + "?wsdl)");
            String addr = "127.0.0.1:" + port;
            for (int i = 0; i < 2; i++) {
                executors.add(start(dir, "executor", "--dispatcher", addr, "--slots", "2", "--id", "node" + i));
            }
            await().atMost(Duration.ofSeconds(60)).until(() ->
                    new ObjectMapper().readTree(Cli.run(dir, "status", "--json", "--dispatcher", addr).stdout())
                            .at("/executors/registered").asInt() == 2);

            Path file = dir.resolve("tasks.txt");
            Files.writeString(file, "echo $((6*7))\n".repeat(500));
            Cli.Result r = Cli.run(dir, "submit", "--dispatcher", addr, "--json", "--bundle", "50", file.toString());
            assertThat(r.exit()).as(r.stderr()).isZero();
            assertThat(new ObjectMapper().readTree(r.stdout()).get("succeeded").asInt()).isEqualTo(500);

            // the same through the WS interface, on the same executors
            Files.writeString(file, "echo $((6*7))\n".repeat(199) + "exit 4\n");
            Cli.Result overWs = Cli.run(dir, "submit", "--ws", ws, "--json", "--bundle", "64", file.toString());
            assertThat(overWs.exit()).as("one task failed: %s", overWs.stderr()).isEqualTo(1);
            JsonNode wsSummary = new ObjectMapper().readTree(overWs.stdout());
            assertThat(wsSummary.get("succeeded").asInt()).isEqualTo(199);
            assertThat(wsSummary.get("failed").asInt()).isEqualTo(1);
            assertThat(overWs.stderr()).contains("line 200: exit 4");

            Cli.Result status = Cli.run(dir, "status", "--dispatcher", addr);
            assertThat(status.exit()).isZero();
            assertThat(status.stdout()).contains("executors: 2 registered, 0/4 slots busy")
                    .contains("700 completed (1 failed)").contains("node0").contains("node1");
            // the executor rows under a header naming their columns
            List<String> rows = status.stdout().lines().toList();
            int header = rows.indexOf(rows.stream().filter(l -> l.strip().startsWith("EXECUTOR")).findFirst()
                    .orElseThrow());
            assertThat(rows.get(header)).contains("HOST", "IMPL", "BUSY", "DONE", "FAILURES", "STATE");
            assertThat(rows.subList(header + 1, header + 3)).allSatisfy(row -> assertThat(row).contains(" java ")
                    .contains(" 0/2 ").contains("active"));
            JsonNode json = new ObjectMapper().readTree(Cli.run(dir, "status", "--json", "--ws", ws).stdout());
            assertThat(json.get("completed").asInt()).isEqualTo(700);
            assertThat(json.get("instances").asInt()).isZero();
        } finally {
            dispatcher.destroy();
            assertThat(dispatcher.waitFor(30, TimeUnit.SECONDS)).isTrue();
            for (Process e : executors) {
                // executors exit by themselves once their dispatcher has gone
                assertThat(e.waitFor(30, TimeUnit.SECONDS)).as("executor exits after the dispatcher").isTrue();
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"java", "c"})
    void provisionGivesARunningDispatcherExecutorsAndTakesThemBackWhenIdle(String impl) throws Exception {
        int port = freePort();
        String addr = "127.0.0.1:" + port;
        Process dispatcher = start(dir, "dispatcher", "--host", "127.0.0.1", "--port", Integer.toString(port));
        Process provision = null;
        try {
            await().atMost(Duration.ofSeconds(60)).until(() ->
                    Cli.run(dir, "status", "--json", "--dispatcher", addr).exit() == 0);
            provision = start(dir, "provision", "--dispatcher", addr, "--provisioner", "local", "--max-nodes", "2",
                    "--slots", "2", "--idle", "1", "--poll", "100", "--executor", impl);
            Path file = dir.resolve("tasks.txt");
            // long enough (15 rounds of 0.2 s on 4 slots) to see the executors while they work
            Files.writeString(file, "sleep 0.2\n".repeat(60));
            CompletableFuture<Cli.Result> submitted = CompletableFuture.supplyAsync(() -> {
                try {
                    return Cli.run(dir, "submit", "--dispatcher", addr, "--json", file.toString());
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            });
            // the jobs started the executor asked for
            AtomicReference<JsonNode> executors = new AtomicReference<>();
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                executors.set(new ObjectMapper().readTree(
                        Cli.run(dir, "status", "--json", "--dispatcher", addr).stdout()).get("executorList"));
                return !executors.get().findValuesAsText("impl").isEmpty() || submitted.isDone();
            });
            assertThat(executors.get().findValuesAsText("impl")).isNotEmpty().containsOnly(impl);
            Cli.Result r = submitted.get(120, TimeUnit.SECONDS);
            assertThat(r.exit()).as(r.stderr()).isZero();
            assertThat(new ObjectMapper().readTree(r.stdout()).get("succeeded").asInt()).isEqualTo(60);
            // idle for 1 s, the executors leave; nothing stays allocated
            await().atMost(Duration.ofSeconds(60)).until(() -> new ObjectMapper().readTree(
                    Cli.run(dir, "status", "--json", "--dispatcher", addr).stdout()).at("/executors/registered").asInt() == 0);
        } finally {
            if (provision != null) {
                provision.destroy();
                assertThat(provision.waitFor(30, TimeUnit.SECONDS)).as("provision stops on SIGTERM").isTrue();
            }
            dispatcher.destroy();
            assertThat(dispatcher.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void anUnreachableDispatcherIsOneLineAndANonZeroExit() throws Exception {
        Path file = dir.resolve("t.txt");
        Files.writeString(file, "true\n");
        int port = freePort();
        Cli.Result r = Cli.run(dir, "submit", "--dispatcher", "127.0.0.1:" + port, file.toString());
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr().strip().lines()).hasSize(1);
        assertThat(r.stderr()).startsWith("falkon submit: cannot connect to dispatcher at 127.0.0.1:" + port);
        Cli.Result s = Cli.run(dir, "status", "--dispatcher", "127.0.0.1:" + port);
        assertThat(s.exit()).isEqualTo(2);
        assertThat(s.stderr().strip().lines()).hasSize(1);
        // an executor waits for its dispatcher (next test) unless told not to
        for (String impl : List.of("java", "c")) {
            Cli.Result e = Cli.run(dir, "executor", "--impl", impl, "--reconnect-for", "0", "--dispatcher",
                    "127.0.0.1:" + port);
            assertThat(e.exit()).as(impl).isEqualTo(2);
            assertThat(e.stderr()).as(impl).contains("cannot connect to dispatcher at 127.0.0.1:" + port);
        }
    }

    /**
     * docs/cli.md: a file's results are the same whichever way it reaches the dispatcher. Lines run
     * without the shell fall back to it when their program cannot start; WS carries the line too.
     */
    @Test
    void aTaskFileGivesTheSameResultsOverTcpAndWs() throws Exception {
        int port = freePort();
        int wsPort = freePort();
        String addr = "127.0.0.1:" + port;
        String ws = "http://127.0.0.1:" + wsPort + "/axis2/services/Falkon";
        Process dispatcher = start(dir, "dispatcher", "--host", "127.0.0.1", "--port", Integer.toString(port),
                "--ws-port", Integer.toString(wsPort));
        Process executor = null;
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> Cli.run(dir, "status", "--dispatcher", addr).exit() == 0);
            executor = start(dir, "executor", "--dispatcher", addr, "--slots", "2");
            Files.writeString(dir.resolve("not-executable"), "echo never\n");
            Path script = Files.writeString(dir.resolve("no-shebang"), "echo run by the shell\n");
            script.toFile().setExecutable(true);
            Path file = Files.writeString(dir.resolve("both.txt"), String.join("\n", "no-such-program-xyz",
                    "./not-executable", "./no-shebang", "echo plain", "exit 4", "/bin/ls /no/such/dir", "") + "\n");
            List<List<String>> seen = new ArrayList<>();
            for (List<String> target : List.of(List.of("--dispatcher", addr), List.of("--ws", ws))) {
                Path results = dir.resolve("results-" + seen.size() + ".jsonl");
                List<String> args = new ArrayList<>(List.of("submit"));
                args.addAll(target);
                args.addAll(List.of("--results", results.toString(), file.toString()));
                Cli.Result r = Cli.run(dir, args.toArray(String[]::new));
                assertThat(r.exit()).as(r.stderr()).isEqualTo(1);
                seen.add(Files.readAllLines(results).stream().map(l -> {
                    JsonNode n = RunCommandTest.Cli2.parse(l);
                    return n.get("line").asInt() + " " + n.get("status").asText() + " " + n.get("exitCode").asInt()
                            + " " + n.get("stdout").asText() + "|" + n.get("stderr").asText();
                }).sorted().toList());
            }
            assertThat(seen.get(0)).hasSize(6).anySatisfy(l -> assertThat(l).startsWith("1 EXITED 127 "))
                    .anySatisfy(l -> assertThat(l).startsWith("2 EXITED 126 "))
                    .anySatisfy(l -> assertThat(l).startsWith("3 EXITED 0 run by the shell"));
            assertThat(seen.get(1)).as("over WS").isEqualTo(seen.get(0));
        } finally {
            if (executor != null) {
                executor.destroy();
                assertThat(executor.waitFor(30, TimeUnit.SECONDS)).isTrue();
            }
            dispatcher.destroy();
            assertThat(dispatcher.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void submitSaysSoWhileNoExecutorIsThereToRunItsTasks() throws Exception {
        int port = freePort();
        String addr = "127.0.0.1:" + port;
        Process dispatcher = start(dir, "dispatcher", "--host", "127.0.0.1", "--port", Integer.toString(port));
        Process executor = null;
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> Cli.run(dir, "status", "--dispatcher", addr).exit() == 0);
            Path file = Files.writeString(dir.resolve("t.txt"), "echo ran\n".repeat(3));
            Path err = dir.resolve("submit.err");
            List<String> cmd = Cli.falkon(List.of("-XX:TieredStopAtLevel=1"));
            cmd.addAll(List.of("submit", "--dispatcher", addr, file.toString()));
            Process submit = Cli.asUser(new ProcessBuilder(cmd).directory(dir.toFile()).redirectError(err.toFile())
                    .redirectOutput(dir.resolve("submit.out").toFile()).redirectInput(new File("/dev/null")), dir)
                    .start();
            await().atMost(Duration.ofSeconds(60)).until(() -> Files.readString(err).contains(
                    "no executor is registered with the dispatcher: 3 task(s) waiting for one ("));
            assertThat(submit.isAlive()).isTrue();
            executor = start(dir, "executor", "--dispatcher", addr, "--slots", "1");
            assertThat(submit.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(submit.exitValue()).as(Files.readString(err)).isZero();
            assertThat(Files.readString(dir.resolve("submit.out"))).isEqualTo("ran\n".repeat(3));
        } finally {
            if (executor != null) {
                executor.destroy();
                assertThat(executor.waitFor(30, TimeUnit.SECONDS)).isTrue();
            }
            dispatcher.destroy();
            assertThat(dispatcher.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"java", "c"})
    void anExecutorStartedBeforeItsDispatcherWaitsForItAndSaysSo(String impl) throws Exception {
        // a batch script starts the dispatcher and its executors together: the executors may dial first
        int port = freePort();
        String addr = "127.0.0.1:" + port;
        Path log = dir.resolve("executor.log");
        List<String> cmd = Cli.falkon(List.of("-XX:TieredStopAtLevel=1"));
        cmd.addAll(List.of("executor", "--impl", impl, "--dispatcher", addr, "--slots", "1", "--id", "early-" + impl));
        Process executor = Cli.asUser(new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).redirectInput(new File("/dev/null")), dir).start();
        Process dispatcher = null;
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> Files.readString(log).contains("no dispatcher at "
                    + addr + " yet"));
            assertThat(Files.readString(log)).contains("dialling again for up to 600 s");
            assertThat(executor.isAlive()).isTrue();
            dispatcher = start(dir, "dispatcher", "--host", "127.0.0.1", "--port", Integer.toString(port));
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                Cli.Result s = Cli.run(dir, "status", "--json", "--dispatcher", addr);
                return s.exit() == 0 && new ObjectMapper().readTree(s.stdout()).at("/executors/registered").asInt() == 1;
            });
            Path file = Files.writeString(dir.resolve("t.txt"), "echo waited\n");
            Cli.Result r = Cli.run(dir, "submit", "--dispatcher", addr, file.toString());
            assertThat(r.exit()).as(r.stderr()).isZero();
            assertThat(r.stdout()).startsWith("waited\n");
        } finally {
            executor.destroy();
            assertThat(executor.waitFor(30, TimeUnit.SECONDS)).isTrue();
            if (dispatcher != null) {
                dispatcher.destroy();
                assertThat(dispatcher.waitFor(30, TimeUnit.SECONDS)).isTrue();
            }
        }
    }

    @Test
    void aMissingTaskFileAndBadOptionsAreClearErrors() throws Exception {
        Cli.Result r = Cli.run(dir, "run", "no-such-file.txt");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr().strip()).isEqualTo("falkon run: task file no-such-file.txt does not exist or is not a file");
        // a port in use: the message names it, for each of the dispatcher's listeners
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            String port = Integer.toString(taken.getLocalPort());
            Cli.Result tcp = Cli.run(dir, "dispatcher", "--host", "127.0.0.1", "--port", port);
            assertThat(tcp.exit()).isEqualTo(2);
            assertThat(tcp.stderr().strip()).isEqualTo("falkon dispatcher: cannot listen on 127.0.0.1:" + port
                    + ": Address already in use");
            Cli.Result http = Cli.run(dir, "dispatcher", "--host", "127.0.0.1", "--port", "0", "--http-port", port);
            assertThat(http.exit()).isEqualTo(2);
            assertThat(http.stderr()).contains("cannot start the monitoring port on /127.0.0.1:" + port
                    + ": Address already in use");
        }
        Cli.Result bad = Cli.run(dir, "dispatcher", "--policy", "fastest");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.stderr()).contains("unknown dispatch policy 'fastest'");
        Cli.Result usage = Cli.run(dir, "submit");
        assertThat(usage.exit()).isEqualTo(2);
        assertThat(usage.stderr()).contains("Missing required");
        // emulated executors complete tasks without running them: only with --no-exec
        Cli.Result emulate = Cli.run(dir, "executor", "--dispatcher", "127.0.0.1:1", "--emulate", "100");
        assertThat(emulate.exit()).isEqualTo(2);
        assertThat(emulate.stderr().strip()).isEqualTo("falkon executor: --emulate needs N >= 1 and --no-exec "
                + "(got --emulate 100, no --no-exec, --io-threads " + Runtime.getRuntime().availableProcessors() + ")");
        // slot threads on one CPU each: the C executor's option, refused by the Java one, checked by the C one
        Cli.Result pinJava = Cli.run(dir, "executor", "--dispatcher", "127.0.0.1:1", "--pin-slots", "on");
        assertThat(pinJava.exit()).isEqualTo(2);
        assertThat(pinJava.stderr().strip()).isEqualTo("falkon executor: --pin-slots is an option of the C executor "
                + "only (--impl c): the JVM cannot keep a thread on one CPU");
        Cli.Result pinC = Cli.run(dir, "executor", "--impl", "c", "--dispatcher", "127.0.0.1:1", "--pin-slots", "always");
        assertThat(pinC.exit()).isEqualTo(2);
        assertThat(pinC.stderr().strip()).isEqualTo("falkon-executor-c: --pin-slots must be auto, on or off: 'always'");
    }
}
