package io.falkon.e2e.commands;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What bin/falkon chooses for a {@code falkon run} with no {@code FALKON_JAVA_OPTS}, seen from inside
 * the run: the task looks up the run's JVM (its executor's parent) and prints the collector on its
 * command line. G1 for small task files, whose start it shortens by mapping the class archive's heap
 * objects; ParallelGC above 16 KiB, where G1 made the large runs slower (docs/benchmarks.md, "G1 for
 * small task files").
 */
class LauncherChoicesTest {
    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();
    private static final String COLLECTOR = "tr '\\0' '\\n' < /proc/$(awk '{print $4}' /proc/$PPID/stat)/cmdline"
            + " | grep -E -- '^-XX:\\+Use[A-Za-z0-9]+GC$'\n";

    @TempDir
    Path dir;

    private String collectorOfARunOf(String tasks) throws Exception {
        Path file = Files.writeString(dir.resolve("tasks.txt"), tasks);
        // the task's output comes on standard output, the summary on standard error
        Cli.Result r = Cli.program(dir, 5, "env", "-u", "FALKON_JAVA_OPTS", "JAVA_HOME=" + System.getProperty("java.home"),
                ROOT.resolve("bin/falkon").toString(), "run", file.toString());
        assertThat(r.exit()).as(r.stderr()).isZero();
        return r.stdout().strip();
    }

    @Test
    void aSmallTaskFileRunsOnG1AndALargeOneOnParallelGc() throws Exception {
        // the choice is made with the class data archive of JDK 17-23; on a later JDK's
        // ahead-of-time cache every run keeps ParallelGC
        assumeTrue(Files.isRegularFile(ROOT.resolve("cli/target/falkon.jsa")), "the build made a class data archive");
        assertThat(collectorOfARunOf(COLLECTOR)).isEqualTo("-XX:+UseG1GC");
        // comment lines make the file large without adding tasks
        String padding = ("# " + "x".repeat(98) + "\n").repeat(170);
        assertThat(padding.length()).isGreaterThan(16 * 1024);
        assertThat(collectorOfARunOf(COLLECTOR + padding)).isEqualTo("-XX:+UseParallelGC");
    }
}
