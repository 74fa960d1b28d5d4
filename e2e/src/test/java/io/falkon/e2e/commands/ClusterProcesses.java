package io.falkon.e2e.commands;

import io.falkon.client.ClientOptions;
import io.falkon.e2e.Ports;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Real falkon processes for tests (1 dispatcher + N executors, each its own JVM), their output
 * kept in log files under a directory. Kill with {@link #kill9}; everything left is killed on close.
 */
final class ClusterProcesses implements AutoCloseable {
    private final Path logs;
    private final List<Process> all = new ArrayList<>();
    private int started;

    ClusterProcesses(Path logs) {
        this.logs = logs;
    }

    /** A free port below the kernel's ephemeral range, in this test JVM's share ({@link Ports#free}). */
    static int freePort() throws IOException {
        return Ports.free();
    }

    private Process spawn(String name, List<String> args) throws IOException {
        return spawn(name, List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"), args);
    }

    private Process spawn(String name, List<String> jvm, List<String> args) throws IOException {
        List<String> cmd = Cli.falkon(jvm);
        cmd.addAll(args);
        Path log = logs.resolve(name + "-" + (started++) + ".log");
        Process p = Cli.asUser(new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile())
                .redirectInput(new File("/dev/null")), logs).start();
        all.add(p);
        return p;
    }

    /** Starts {@code falkon dispatcher} on 127.0.0.1:port and waits until it listens. */
    Process dispatcher(int port, String... extra) throws IOException, InterruptedException {
        return dispatcher(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"), port, extra);
    }

    /** The same in a JVM with these options (as FALKON_JAVA_OPTS gives them). */
    Process dispatcher(List<String> jvm, int port, String... extra) throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(List.of("dispatcher", "--host", "127.0.0.1", "--port",
                Integer.toString(port)));
        args.addAll(List.of(extra));
        int n = started;
        Process p = spawn("dispatcher", jvm, args);
        Path log = logs.resolve("dispatcher-" + n + ".log");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            if (Files.exists(log) && Files.readString(log).contains("falkon dispatcher listening on")) {
                return p;
            }
            if (!p.isAlive()) {
                throw new IllegalStateException("dispatcher exited: " + Files.readString(log));
            }
            TimeUnit.MILLISECONDS.sleep(50); // polling its log: the process offers no other signal
        }
        throw new IllegalStateException("dispatcher did not listen within 60 s: " + Files.readString(log));
    }

    /** Runs any {@code falkon} command (e.g. {@code submit}) in the background; its output goes to NAME-N.log. */
    Process command(String name, String... args) throws IOException {
        return spawn(name, List.of(args));
    }

    Process executor(int port, String id, String... extra) throws IOException {
        List<String> args = new ArrayList<>(List.of("executor", "--dispatcher", "127.0.0.1:" + port, "--id", id));
        args.addAll(List.of(extra));
        return spawn("executor-" + id, args);
    }

    /** Options for a client in this JVM: the token the dispatcher wrote to the processes' ~/.falkon. */
    ClientOptions clientOptions() {
        return ClientOptions.defaults().withToken(Cli.token(logs));
    }

    static void kill9(Process p) throws InterruptedException {
        p.destroyForcibly(); // SIGKILL on Linux
        p.waitFor(30, TimeUnit.SECONDS);
    }

    String log(String prefix) throws IOException {
        StringBuilder sb = new StringBuilder();
        try (var files = Files.list(logs)) {
            for (Path f : files.filter(f -> f.getFileName().toString().startsWith(prefix)).sorted().toList()) {
                sb.append(Files.readString(f));
            }
        }
        return sb.toString();
    }

    @Override
    public void close() {
        for (Process p : all) {
            p.descendants().forEach(ProcessHandle::destroyForcibly); // a test run leaves nothing running
            p.destroyForcibly();
        }
        try {
            for (Process p : all) {
                p.waitFor(30, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
