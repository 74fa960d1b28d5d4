package io.falkon.cli;

import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.executor.LocalExecutors;
import io.falkon.protocol.TaskSpec;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The executor contract, run against the C executor (executor-c/, built by the normal build), and
 * its leak check: the AddressSanitizer + LeakSanitizer build runs 10,000 real tasks and must exit
 * cleanly with no report.
 */
class CExecutorIT extends ExecutorContract {
    @Override
    List<String> command() throws IOException {
        return LocalExecutors.cCommand();
    }

    /** The sanitizer build next to the normal one (executor-c/target/build-asan). */
    static Path sanitizerBuild() throws IOException {
        Path normal = LocalExecutors.cExecutable();
        Path asan = normal.getParent().resolveSibling("build-asan").resolve(normal.getFileName());
        assertThat(asan).as("the sanitizer build of the C executor (built by ./mvnw verify)").isExecutable();
        return asan;
    }

    @Test
    void noLeaksOrMemoryErrorsUnderSanitizersOverTenThousandTasks() throws Exception {
        Dispatcher d = dispatcher(new FirstAvailable());
        List<String> cmd = new ArrayList<>(List.of(sanitizerBuild().toString(), "--log-level", "warn"));
        Process p = executor(cmd, d.port(), "asan", "--slots", "2", "--reconnect-for", "0");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        List<TaskSpec> specs = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            specs.add(i % 100 == 0 ? TaskSpec.of("/bin/sh", "-c", "echo out; echo err >&2; exit 3")
                    : TaskSpec.of("/bin/true"));
        }
        assertThat(all(instance(d.port(), "asan").submit(specs)))
                .allSatisfy(r -> assertThat(r.exitCode()).isIn(0, 3));
        d.close(); // SHUTTING_DOWN: the executor stops, frees everything, and LeakSanitizer checks at exit
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the executor exits when its dispatcher shuts down").isTrue();
        String log = Files.readString(log("asan"));
        assertThat(log).doesNotContain("LeakSanitizer").doesNotContain("AddressSanitizer")
                .doesNotContain("runtime error");
        assertThat(p.exitValue()).as(log).isZero();
    }
}
