package io.falkon.e2e.commands;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The persistent-worker example (examples/workers) as its README runs it: small files counted by
 * the example C worker through `falkon run`, checked against one `wc` process per file.
 */
class WorkerExampleIT {
    static final Path ROOT = Path.of("").toAbsolutePath().getParent();

    @TempDir
    Path dir;

    @Test
    void theWorkersCountsOfEveryFileEqualWcs() throws Exception {
        Path out = dir.resolve("workers");
        Cli.Result r = Cli.program(dir, 5, "env", "FILES=300", "sh", ROOT.resolve("examples/workers/run.sh").toString(),
                out.toString());
        assertThat(r.exit()).as(r.stdout() + r.stderr()).isZero();
        assertThat(r.stdout()).contains("ok: the worker's counts of all 300 files equal wc's");
        assertThat(r.stderr()).contains("300 tasks: 300 succeeded, 0 failed");
        // not a formality: the counts are the files' own
        List<String> counted = Files.readAllLines(out.resolve("counted.sorted"));
        assertThat(counted).hasSize(300);
        String first = counted.get(0);
        Path file = out.resolve(first.split(" ")[3]);
        assertThat(Long.parseLong(first.split(" ")[2])).isEqualTo(Files.size(file));
        assertThat(Long.parseLong(first.split(" ")[0])).isEqualTo(Files.readAllLines(file).size());
    }
}
