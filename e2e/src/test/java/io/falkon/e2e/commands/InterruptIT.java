package io.falkon.e2e.commands;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.auth.TokenSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The command line under interruption and as the README writes it, in real processes: Ctrl-C
 * (SIGINT) keeps every finished result and cancels the rest; the README's executor line works.
 */
class InterruptIT {
    static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private static void sigint(Process p) throws Exception {
        assertThat(new ProcessBuilder("kill", "-INT", Long.toString(p.pid())).start().waitFor()).isZero();
    }

    private static long lines(Path file) throws Exception {
        return Files.exists(file) ? Files.readAllLines(file).size() : 0;
    }

    @Test
    void ctrlCOnRunLeavesEveryFinishedResultOnDiskAndSaysHowFarItGot() throws Exception {
        Path tasks = Files.writeString(dir.resolve("tasks.txt"), "sleep 0.3\n".repeat(60));
        Path results = dir.resolve("r.jsonl");
        Path out = dir.resolve("run.out");
        List<String> cmd = Cli.falkon(List.of("-XX:TieredStopAtLevel=1"));
        cmd.addAll(List.of("run", "--slots", "2", "--results", results.toString(), tasks.toString()));
        Process p = Cli.asUser(new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(out.toFile()).redirectInput(new File("/dev/null")), dir).start();
        // results reach the file while it runs, not only at the end
        await().atMost(Duration.ofSeconds(60)).until(() -> lines(results) >= 4);
        sigint(p);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        List<String> written = Files.readAllLines(results);
        List<String> statuses = written.stream().map(l -> RunCommandTest.Cli2.parse(l).get("status").asText()).toList();
        assertThat(statuses).as("every finished result, then the cancelled ones: nothing half-written")
                .hasSizeLessThanOrEqualTo(60).containsOnly("EXITED", "CANCELLED");
        assertThat(statuses.stream().filter("EXITED"::equals).count()).isGreaterThanOrEqualTo(4).isLessThan(60);
        String said = Files.readString(out);
        assertThat(said).containsPattern("interrupted: \\d+ of 60 tasks finished \\(\\d+ succeeded, 0 failed\\)")
                .contains("every finished result is in " + results)
                // the exact command that carries on, and the cancelled tasks apart from failures
                .contains("run what did not succeed: falkon run --rerun-failed " + results + " --slots 2 --results "
                        + results + " " + tasks)
                .doesNotContain("line ").doesNotContain("FAILED").doesNotContain(" failed in ");
        assertThat(said.lines().filter(l -> l.startsWith("interrupted:"))).as("one account of the end").hasSize(1);
        // following it runs exactly what did not succeed, and appends to the same record
        long succeededBefore = statuses.stream().filter("EXITED"::equals).count();
        Cli.Result rerun = Cli.run(dir, "run", "--rerun-failed", results.toString(), "--slots", "2", "--results",
                results.toString(), tasks.toString());
        assertThat(rerun.exit()).as(rerun.stderr()).isZero();
        assertThat(rerun.stderr()).contains("rerunning " + (60 - succeededBefore) + " of the 60 tasks");
    }

    @Test
    void ctrlCOnSubmitCancelsItsInstanceInsteadOfLeavingItRunning() throws Exception {
        try (Dispatcher d = Dispatcher.start(DispatcherConfig.local().withToken("interrupt-token"))) {
            Path home = Cli.home(dir);
            Files.createDirectories(home);
            TokenSource.write(home.resolve("token"), Token.of("interrupt-token"));
            List<String> ecmd = Cli.falkon(List.of("-XX:TieredStopAtLevel=1"));
            ecmd.addAll(List.of("executor", "--dispatcher", "127.0.0.1:" + d.port(), "--slots", "2",
                    "--reconnect-for", "0"));
            Process executor = Cli.asUser(new ProcessBuilder(ecmd).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("exec.log").toFile()), dir).start();
            try {
                d.awaitExecutors(1, Duration.ofSeconds(60));
                Path tasks = Files.writeString(dir.resolve("tasks.txt"), "sleep 5\n".repeat(40));
                List<String> cmd = Cli.falkon(List.of("-XX:TieredStopAtLevel=1"));
                cmd.addAll(List.of("submit", "--dispatcher", "127.0.0.1:" + d.port(), tasks.toString()));
                Process submit = Cli.asUser(new ProcessBuilder(cmd).redirectErrorStream(true)
                        .redirectOutput(dir.resolve("submit.out").toFile()), dir).start();
                await().atMost(Duration.ofSeconds(60)).until(() -> JSON.readTree(d.status()).get("running").asInt() == 2);
                sigint(submit);
                assertThat(submit.waitFor(60, TimeUnit.SECONDS)).isTrue();
                JsonNode status = JSON.readTree(d.status());
                assertThat(status.get("queued").asInt()).as("nothing left queued").isZero();
                assertThat(status.get("instances").asInt()).as("the instance is gone").isZero();
                assertThat(Files.readString(dir.resolve("submit.out"))).contains("cancelled")
                        .doesNotContain("line ").doesNotContain("failed in");
                // the dispatcher counts them apart from failures too
                assertThat(status.get("cancelled").asInt()).isEqualTo(40);
                assertThat(status.get("failed").asInt()).isZero();
            } finally {
                executor.destroyForcibly();
            }
        }
    }

    @Test
    void theReadmesCExecutorLineWorksAsWritten() throws Exception {
        // README: bin/falkon executor [--impl c] --dispatcher head-node:50500 --slots 16
        Path root = Path.of(System.getProperty("user.dir")).getParent();
        try (Dispatcher d = Dispatcher.start(DispatcherConfig.local().withToken("readme-token"));
             FalkonClient client = FalkonClient.connect("127.0.0.1:" + d.port(),
                     ClientOptions.defaults().withToken("readme-token"))) {
            ProcessBuilder pb = new ProcessBuilder(root.resolve("bin/falkon").toString(), "executor", "--impl", "c",
                    "--dispatcher", "127.0.0.1:" + d.port(), "--slots", "2").directory(root.toFile())
                    .redirectErrorStream(true).redirectOutput(dir.resolve("readme.log").toFile());
            pb.environment().put(TokenSource.ENV, "readme-token");
            // SIGKILLed below: its spool directory stays behind, in this test's directory
            pb.environment().put("TMPDIR", dir.toString());
            Process p = pb.start();
            try {
                d.awaitExecutors(1, Duration.ofSeconds(60));
                assertThat(client.createInstance("readme").submit(TaskSpec.of("/bin/echo", "c executor"))
                        .get(60, TimeUnit.SECONDS).stdout()).isEqualTo("c executor\n");
                assertThat(JSON.readTree(d.status()).get("executorList").get(0).get("impl").asText()).isEqualTo("c");
                // the launcher became the C executor (exec): its pid is the executor's, no JVM in between
                assertThat(p.info().command().orElse("")).endsWith("falkon-executor-c");
                assertThat(p.descendants().filter(h -> h.info().command().orElse("").endsWith("/java"))).isEmpty();
            } finally {
                p.destroyForcibly();
                p.waitFor(30, TimeUnit.SECONDS);
            }
            // SIGKILL of that pid is the executor's end: it leaves the dispatcher
            await().atMost(Duration.ofSeconds(60)).until(() -> JSON.readTree(d.status()).at("/executors/registered").asInt() == 0);
        }
    }

    @Test
    void aCExecutorStartedThroughTheJvmDiesWithIt() throws Exception {
        try (Dispatcher d = Dispatcher.start(DispatcherConfig.local().withToken("jvm-token"))) {
            List<String> cmd = Cli.falkonJvm(List.of("-XX:TieredStopAtLevel=1"));
            cmd.addAll(List.of("executor", "--impl", "c", "--dispatcher", "127.0.0.1:" + d.port(), "--slots", "1",
                    "--id", "behind-a-jvm"));
            ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("jvm-launched.log").toFile());
            pb.environment().put(TokenSource.ENV, "jvm-token");
            pb.environment().put("TMPDIR", dir.toString()); // whatever way it ends, its spool stays in here
            Process launcher = pb.start();
            try {
                d.awaitExecutors(1, Duration.ofSeconds(60));
                ProcessHandle c = launcher.descendants().filter(h -> h.info().command().orElse("")
                        .endsWith("falkon-executor-c")).findFirst().orElseThrow();
                launcher.destroyForcibly(); // SIGKILL: the JVM gets no chance to stop its child
                await().atMost(Duration.ofSeconds(60)).until(() -> !c.isAlive());
                await().atMost(Duration.ofSeconds(60)).until(() -> JSON.readTree(d.status()).at("/executors/registered").asInt() == 0);
            } finally {
                launcher.descendants().forEach(ProcessHandle::destroyForcibly);
                launcher.destroyForcibly();
            }
        }
    }
}
