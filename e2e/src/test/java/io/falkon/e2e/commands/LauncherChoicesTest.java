package io.falkon.e2e.commands;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What bin/falkon chooses for a {@code falkon run} with no {@code FALKON_JAVA_OPTS}, seen from inside
 * the run: the task looks up the run's JVM (its executor's parent) and prints the collector and the
 * class archive on its command line. For small task files G1, whose start it shortens by mapping the
 * class archive's heap objects, and the run's own archive, half the size of the whole one; above 16
 * KiB ParallelGC, where G1 made the large runs slower, and the whole archive (docs/benchmarks.md,
 * "G1 for small task files", "A run's own class archive").
 */
class LauncherChoicesTest {
    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();
    private static final String CHOICES = "tr '\\0' '\\n' < /proc/$(awk '{print $4}' /proc/$PPID/stat)/cmdline"
            + " | grep -E -- '^-XX:(\\+Use[A-Za-z0-9]+GC|SharedArchiveFile=.*)$'\n";

    @TempDir
    Path dir;

    /** The collector's flag and the archive's flag of a run of {@code tasks}, in the order given. */
    private List<String> choicesOfARunOf(String tasks) throws Exception {
        Path file = Files.writeString(dir.resolve("tasks.txt"), tasks);
        // the task's output comes on standard output, the summary on standard error
        Cli.Result r = Cli.program(dir, 5, "env", "-u", "FALKON_JAVA_OPTS", "JAVA_HOME=" + System.getProperty("java.home"),
                ROOT.resolve("bin/falkon").toString(), "run", file.toString());
        assertThat(r.exit()).as(r.stderr()).isZero();
        return r.stdout().strip().lines().toList();
    }

    @Test
    void aSmallTaskFileRunsOnG1WithTheRunsArchiveAndALargeOneOnParallelGcWithTheWholeArchive() throws Exception {
        // the choice is made with the class data archives of JDK 17-23; on a later JDK's
        // ahead-of-time cache every run keeps ParallelGC
        Path whole = ROOT.resolve("cli/target/falkon.jsa");
        Path runs = ROOT.resolve("cli/target/falkon-run.jsa");
        assumeTrue(Files.isRegularFile(whole), "the build made a class data archive");
        assertThat(runs).as("the build makes the run's own archive beside the whole one").isRegularFile();
        assertThat(choicesOfARunOf(CHOICES)).containsExactly("-XX:SharedArchiveFile=" + runs, "-XX:+UseG1GC");
        // comment lines make the file large without adding tasks
        String padding = ("# " + "x".repeat(98) + "\n").repeat(170);
        assertThat(padding.length()).isGreaterThan(16 * 1024);
        assertThat(choicesOfARunOf(CHOICES + padding)).containsExactly("-XX:SharedArchiveFile=" + whole,
                "-XX:+UseParallelGC");
    }
}
