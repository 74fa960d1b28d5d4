package io.falkon.swift;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.executor.Executor;
import io.falkon.executor.ExecutorConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Real Swift/K scripts whose app() calls run through the provider: the Swift engine from
 * {@code ../shared/swift-k} (test material, unpacked into target/), a dispatcher in a process of
 * its own (so that it can be killed), and a real executor. Skipped, saying so, without Swift/K.
 */
class SwiftIT {
    private static Path swiftHome;

    @TempDir
    Path dir;
    private int port;
    private String token;
    private Process dispatcher;
    private Executor executor;

    @BeforeAll
    static void unpackSwift() throws Exception {
        Path dist = Path.of(System.getProperty("falkon.swift.dist", "../shared/swift-k/swift-k-dist.tgz"));
        assumeTrue(Files.isRegularFile(dist), "Swift/K is not at " + dist + " (test material, outside the "
                + "repository): the Swift/K integration tests are skipped");
        Path target = Path.of("target", "swift-k").toAbsolutePath();
        swiftHome = target.resolve("swift-svn");
        if (!Files.isExecutable(swiftHome.resolve("bin/swift"))) {
            Files.createDirectories(target);
            Process tar = new ProcessBuilder("tar", "xzf", dist.toAbsolutePath().toString(), "-C", target.toString())
                    .inheritIO().start();
            assertThat(tar.waitFor(120, TimeUnit.SECONDS) && tar.exitValue() == 0).as("tar xzf " + dist).isTrue();
        }
    }

    @BeforeEach
    void startFalkon() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        byte[] b = new byte[16];
        new Random().nextBytes(b);
        token = HexFormat.of().formatHex(b);
        dispatcher = startDispatcher();
        executor = Executor.start(ExecutorConfig.of("127.0.0.1", port).withId("e1").withSlots(4).withToken(token));
        await().atMost(Duration.ofSeconds(60)).until(() -> status().path("executors").path("registered").asInt() == 1);
    }

    @AfterEach
    void stopFalkon() throws Exception {
        if (executor != null) {
            executor.close();
        }
        if (dispatcher != null) {
            dispatcher.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** {@code falkon dispatcher} in its own JVM, with a journal, on {@link #port}. */
    private Process startDispatcher() throws Exception {
        Path log = dir.resolve("dispatcher-" + System.nanoTime() + ".log");
        Process p = new ProcessBuilder(System.getProperty("java.home") + "/bin/java", "-cp",
                System.getProperty("java.class.path"), "io.falkon.cli.DispatcherCommand", "--host", "127.0.0.1",
                "--port", Integer.toString(port), "--token", token, "--journal", dir.resolve("journal").toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        await().atMost(Duration.ofSeconds(60)).until(() -> {
            assertThat(p.isAlive()).as("the dispatcher runs: %s", Files.readString(log)).isTrue();
            return Files.readString(log).contains("listening on");
        });
        return p;
    }

    private JsonNode status() throws IOException {
        try (FalkonClient c = FalkonClient.connect("127.0.0.1:" + port, ClientOptions.defaults().withToken(token))) {
            return new ObjectMapper().readTree(c.status());
        }
    }

    private record Run(int exit, String output) {
    }

    private Path conf(String name, String extra) throws IOException {
        return conf(name, extra, dir.resolve("work"));
    }

    private Path conf(String name, String extra, Path workDirectory) throws IOException {
        return Files.writeString(dir.resolve(name), "site.falkon {\n"
                + "    execution { type: \"falkon\", URL: \"falkon://127.0.0.1:" + port + "\" }\n"
                + "    filesystem { type: \"local\" }\n"
                + "    workDirectory: \"" + workDirectory + "\"\n"
                + "    maxParallelTasks: 256\n    initialParallelTasks: 256\n"
                + "    app.ALL { executable: \"*\" }\n" + extra + "}\nsites: [falkon]\n");
    }

    private Run swift(Path runDir, Path conf, String script) throws Exception {
        Files.createDirectories(runDir);
        Path file = Files.writeString(runDir.resolve("script.swift"), script);
        Path out = runDir.resolve("swift.out");
        ProcessBuilder pb = new ProcessBuilder("timeout", "600", swiftHome.resolve("bin/swift").toString(), "-config",
                conf.toString(), file.toString()).directory(runDir.toFile()).redirectErrorStream(true)
                .redirectOutput(out.toFile()).redirectInput(new File("/dev/null"));
        pb.environment().put("SWIFT_USAGE_STATS", "0");
        pb.environment().put("CLASSPATH", System.getProperty("falkon.swift.jar"));
        pb.environment().put("FALKON_TOKEN", token);
        pb.environment().put("PATH", System.getProperty("java.home") + "/bin:" + System.getenv("PATH"));
        Process p = pb.start();
        assertThat(p.waitFor(660, TimeUnit.SECONDS)).as("swift finished").isTrue();
        return new Run(p.exitValue(), Files.readString(out));
    }

    private static final String MANY = """
            type file;
            app (file o) make (int i) {
              echo i stdout=@filename(o);
            }
            file outs[] <simple_mapper; prefix="out/f", suffix=".txt">;
            foreach i in [0:%d] {
              outs[i] = make(i);
            }
            """;

    private static void assertAllWritten(Path runDir, int n) throws IOException {
        for (int i = 0; i < n; i++) {
            assertThat(runDir.resolve("out").resolve(String.format("f%04d.txt", i))).as("app %d's file", i)
                    .hasContent(Integer.toString(i));
        }
    }

    @Test
    void helloWorldRunsThroughFalkon() throws Exception {
        Path run = dir.resolve("hello");
        Run r = swift(run, conf("swift.conf", ""), """
                type file;
                app (file o) hello (string s) {
                  echo s stdout=@filename(o);
                }
                file out <"hello.txt">;
                out = hello("hello from falkon");
                """);
        assertThat(r.exit()).as(r.output()).isZero();
        assertThat(run.resolve("hello.txt")).hasContent("hello from falkon");
        // Swift's own jobs (cleaning up its run directory) go through the provider too
        assertThat(status().path("completed").asInt()).as("the app ran as a Falkon task").isGreaterThanOrEqualTo(1);
    }

    @Test
    void aThousandAppsWriteAThousandFiles() throws Exception {
        Path run = dir.resolve("many");
        Run r = swift(run, conf("swift.conf", ""), MANY.formatted(999));
        assertThat(r.exit()).as(r.output()).isZero();
        assertThat(r.output()).contains("Finished successfully:1000");
        assertAllWritten(run, 1000);
        assertThat(status().path("completed").asInt()).isGreaterThanOrEqualTo(1000);
    }

    @Test
    void anAppsExitCodeReachesSwiftInBothStatusModes() throws Exception {
        String script = """
                app fails () {
                  sh "-c" "exit 3";
                }
                fails();
                """;
        Run files = swift(dir.resolve("files"), conf("files.conf", ""), script);
        assertThat(files.exit()).isEqualTo(2);
        assertThat(files.output()).contains("failed with an exit code of 3");
        Run provider = swift(dir.resolve("provider"), conf("provider.conf", "    statusMode: \"provider\"\n"), script);
        assertThat(provider.exit()).isEqualTo(2);
        assertThat(provider.output()).contains("failed with an exit code of 3").contains("exited with code 3");
    }

    @Test
    void anAppOverItsMaxWallTimeIsKilledAndSwiftToldWhy() throws Exception {
        Path conf = Files.writeString(dir.resolve("wt.conf"), Files.readString(conf("x.conf", ""))
                .replace("app.ALL { executable: \"*\" }", "app.ALL { executable: \"*\", maxWallTime: \"00:00:02\" }"));
        long start = System.nanoTime();
        Run r = swift(dir.resolve("wt"), conf, """
                app slow () {
                  sleep "60";
                }
                slow();
                """);
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.output()).contains("over its wall time (maxwalltime 2 s)");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("not the app's 60 s").isLessThan(Duration.ofSeconds(50));
    }

    @Test
    void aDispatcherKilledAndRestartedFromItsJournalMidRunLosesNoApp() throws Exception {
        Path run = dir.resolve("restart");
        Path conf = conf("swift.conf", "");
        CompletableFuture<Run> swift = CompletableFuture.supplyAsync(() -> {
            try {
                return swift(run, conf, MANY.formatted(999));
            } catch (Exception e) {
                throw new CompletionException(e);
            }
        });
        await().atMost(Duration.ofSeconds(300)).until(() -> status().path("completed").asInt() >= 200);
        dispatcher.destroyForcibly().waitFor(30, TimeUnit.SECONDS); // kill -9, mid-run
        dispatcher = startDispatcher();
        Run r = swift.get(600, TimeUnit.SECONDS);
        assertThat(r.exit()).as(r.output()).isZero();
        assertThat(r.output()).contains("Finished successfully:1000");
        assertAllWritten(run, 1000);
    }

    @Test
    void twoSwiftRunsShareOneDispatcher() throws Exception {
        List<CompletableFuture<Run>> runs = new ArrayList<>();
        for (String name : List.of("a", "b")) {
            // each run its own work directory: both are run001 of a script.swift
            Path conf = conf(name + ".conf", "", dir.resolve("work-" + name));
            runs.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return swift(dir.resolve(name), conf, MANY.formatted(199));
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            }));
        }
        for (CompletableFuture<Run> f : runs) {
            Run r = f.get(600, TimeUnit.SECONDS);
            assertThat(r.exit()).as(r.output()).isZero();
        }
        assertAllWritten(dir.resolve("a"), 200);
        assertAllWritten(dir.resolve("b"), 200);
        assertThat(status().path("completed").asInt()).isGreaterThanOrEqualTo(400);
    }
}
