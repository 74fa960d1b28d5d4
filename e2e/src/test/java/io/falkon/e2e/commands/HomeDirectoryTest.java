package io.falkon.e2e.commands;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.executor.LocalExecutors;
import io.falkon.protocol.auth.TokenSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One rule for where every component finds {@code ~/.falkon} (docs/security.md): {@code $FALKON_HOME},
 * else {@code $HOME/.falkon}, the password database only when {@code HOME} is unset. The processes
 * here run with a {@code HOME} that differs from the password database's home (as in CI, containers
 * and sandboxes; the JVM's {@code user.home} stands in for the latter): the Java dispatcher, the C
 * executor, the Java client and the Python client must all meet at the same token file.
 */
class HomeDirectoryTest {
    @TempDir
    Path dir;

    private ProcessBuilder withHome(ProcessBuilder pb, Path home) {
        Map<String, String> env = pb.environment();
        env.remove(TokenSource.ENV_HOME);
        env.remove(TokenSource.ENV);
        env.remove(TokenSource.ENV_FILE);
        env.put("HOME", home.toString());
        env.put("TMPDIR", dir.toString()); // what they leave, however they end, stays in the test's directory
        return pb.directory(dir.toFile()).redirectInput(new File("/dev/null"));
    }

    private List<String> falkon(String... args) throws Exception {
        // the password database's home, as the JVM reads it, is somewhere else
        List<String> cmd = Cli.falkon(List.of("-XX:TieredStopAtLevel=1", "-Duser.home=" + dir.resolve("passwd-home")));
        cmd.addAll(List.of(args));
        return cmd;
    }

    @Test
    void everyComponentFindsTheTokenUnderHome() throws Exception {
        Path home = Files.createDirectory(dir.resolve("home"));
        int port = ClusterProcesses.freePort();
        String addr = "127.0.0.1:" + port;
        Path log = dir.resolve("dispatcher.log");
        Process dispatcher = withHome(new ProcessBuilder(falkon("dispatcher", "--host", "127.0.0.1", "--port",
                Integer.toString(port))), home).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        Process executor = null;
        try {
            Path token = home.resolve(".falkon/token");
            await().atMost(Duration.ofSeconds(60)).until(() -> Files.readString(log).contains("listening on"));
            assertThat(Files.exists(dir.resolve("passwd-home/.falkon/token"))).isFalse();
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(token))).isEqualTo("rw-------");

            executor = withHome(new ProcessBuilder(LocalExecutors.cExecutable().toString(), "--dispatcher", addr,
                    "--slots", "1", "--id", "under-home"), home).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("executor.log").toFile()).start();
            ObjectMapper json = new ObjectMapper();
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                Process status = withHome(new ProcessBuilder(falkon("status", "--json", "--dispatcher", addr)), home)
                        .redirectError(ProcessBuilder.Redirect.DISCARD).start();
                String out = new String(status.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                return status.waitFor() == 0 && json.readTree(out).at("/executors/registered").asInt() == 1;
            });

            Path python = Path.of("").toAbsolutePath().getParent().resolve("python/src");
            ProcessBuilder pb = withHome(new ProcessBuilder("python3", "-c",
                    "from falkon.token import falkon_home; print(falkon_home())"), home).redirectErrorStream(true);
            pb.environment().put("PYTHONPATH", python.toString());
            Process py = pb.start();
            String pyHome = new String(py.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            assertThat(py.waitFor()).isZero();
            assertThat(pyHome).isEqualTo(home.resolve(".falkon").toString());
        } finally {
            dispatcher.destroy();
            assertThat(dispatcher.waitFor(30, TimeUnit.SECONDS)).isTrue();
            if (executor != null) {
                executor.destroy();
                assertThat(executor.waitFor(30, TimeUnit.SECONDS)).isTrue();
            }
        }
    }
}
