package io.falkon.e2e.commands;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.abort;

/**
 * BLAST split over database slices and merged (examples/blast), with NCBI BLAST+ on a seeded
 * database with planted homologue families: the example's one command generates the data, runs
 * the workflow (makeblastdb per slice, blastp per query file and slice, a merge per query file
 * that gathers every slice's hits into one directory) with {@code falkon run}, and checks that the
 * merged best hits equal a search of the whole database. BLAST+ comes from Debian (the test setup
 * installs it); without it the test is skipped, saying so.
 */
class BlastIT {
    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();

    @TempDir
    Path dir;

    @BeforeAll
    static void blast() throws Exception {
        try {
            DebianPackages.ensure("blastp", "ncbi-blast+");
        } catch (AssertionError e) {
            abort("BlastIT skipped: NCBI BLAST+ is not installed and could not be (apt-get install ncbi-blast+, as "
                    + "root)");
        }
    }

    @Test
    void theMergedBestHitsOfTheSlicesEqualASearchOfTheWholeDatabase() throws Exception {
        Path wf = dir.resolve("blast");
        Cli.Result r = Cli.program(dir, 10, "sh",
                ROOT.resolve("examples/blast/run.sh").toString(), wf.toString());
        assertThat(r.exit()).as(r.stdout() + r.stderr()).isZero();
        assertThat(r.stdout()).contains("24 tasks").contains("ok: the merged best hits equal the whole-database "
                + "search; all 20 planted homologues found");
        assertThat(r.stderr()).contains("24 tasks: 24 succeeded, 0 failed");

        // each merge gathered hits from several slices (the families span them), and its result is what
        // the whole-database search ranks, relatives included
        List<String> merged = Files.readAllLines(wf.resolve("results/q0.tsv"));
        assertThat(merged.stream().map(l -> l.split("\t")[1]).distinct()).hasSizeGreaterThanOrEqualTo(10);
        assertThat(merged.get(0)).startsWith("q_p00000\tp00000\t");
        assertThat(merged.get(1)).startsWith("q_p00000\tp00001\t");

        // the check is not a formality: a merged result missing a hit is caught
        Files.write(wf.resolve("results/q0.tsv"), merged.subList(0, merged.size() - 1));
        Cli.Result tampered = Cli.program(wf, 10, "python3",
                ROOT.resolve("examples/blast/blast.py").toString(), "check", ".");
        assertThat(tampered.exit()).isNotZero();
        assertThat(tampered.stderr()).contains("results/q0.tsv differs from the whole-database search");
    }
}
