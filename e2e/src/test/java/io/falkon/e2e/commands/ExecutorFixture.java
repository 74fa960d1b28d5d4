package io.falkon.e2e.commands;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.dispatcher.policy.DispatchPolicy;
import io.falkon.protocol.auth.TokenSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * What the executor contracts share: a dispatcher in the test's JVM, executor processes of one
 * implementation dialling it on 127.0.0.1 with the deployment's token in their environment, clients,
 * and the cleanup that leaves nothing running. One subclass per contract and implementation.
 */
abstract class ExecutorFixture {
    @TempDir
    Path dir;
    final List<AutoCloseable> closing = new ArrayList<>();
    final List<Process> processes = new ArrayList<>();

    /** The command that starts this implementation's executor, up to its options. */
    abstract List<String> command() throws IOException;

    @AfterEach
    void stop() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        for (Process p : processes) {
            p.destroy(); // SIGTERM: an executor stops as it would on a node, removing its spool
        }
        for (Process p : processes) {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    /** The deployment's token in these tests: executors get it in their environment, never as an argument. */
    static final String TOKEN = "executor-contract-token";

    Dispatcher dispatcher(DispatchPolicy policy) {
        Dispatcher d = Dispatcher.start(DispatcherConfig.local().withPolicy(policy).withToken(TOKEN));
        closing.add(d);
        return d;
    }

    Process executor(List<String> base, int port, String id, String... extra) throws IOException {
        List<String> cmd = new ArrayList<>(base);
        cmd.addAll(List.of("--dispatcher", "127.0.0.1:" + port, "--id", id));
        cmd.addAll(List.of(extra));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log(id).toFile())
                .redirectInput(new File("/dev/null"));
        pb.environment().put(TokenSource.ENV, TOKEN);
        // its spool with the test's directory: one killed on purpose leaves nothing behind
        pb.environment().put("TMPDIR", Files.createDirectories(dir.resolve("tmp")).toString());
        Process p = pb.start();
        processes.add(p);
        return p;
    }

    Process executor(int port, String id, String... extra) throws IOException {
        return executor(command(), port, id, extra);
    }

    Path log(String id) {
        return dir.resolve("executor-" + id + ".log");
    }

    Instance instance(int port, String name) {
        FalkonClient c = FalkonClient.connect("127.0.0.1:" + port, ClientOptions.defaults().withToken(TOKEN));
        closing.add(c);
        return c.createInstance(name);
    }

    static List<TaskResult> all(List<CompletableFuture<TaskResult>> fs) throws Exception {
        CompletableFuture.allOf(fs.toArray(CompletableFuture<?>[]::new)).get(5, TimeUnit.MINUTES);
        return fs.stream().map(CompletableFuture::join).toList();
    }

}
