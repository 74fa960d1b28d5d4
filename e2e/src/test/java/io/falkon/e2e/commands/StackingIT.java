package io.falkon.e2e.commands;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.abort;

/**
 * AstroPortal stacking (examples/stacking) with astropy on real FITS images: the example's one
 * command generates a survey with faint sources below single-image detection, runs the workflow
 * (a cutout task per image, a gather summing each position's cutouts from one directory) with
 * {@code falkon run}, and checks the stack against a serial reference and the sources' gain of
 * about sqrt(N). astropy comes from PyPI into a virtualenv the example makes; without PyPI the
 * test is skipped, saying so.
 */
class StackingIT {
    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();

    @TempDir
    Path dir;

    @Test
    void theStackOfAFaintSourceRisesBySqrtNAndEqualsASerialRun() throws Exception {
        Path wf = dir.resolve("stacking");
        Cli.Result r = Cli.program(dir, 15, "sh",
                ROOT.resolve("examples/stacking/run.sh").toString(), wf.toString());
        if (r.exit() == 3) {
            abort("StackingIT skipped: astropy and numpy could not be installed from PyPI: " + r.stderr().strip());
        }
        assertThat(r.exit()).as(r.stdout() + r.stderr()).isZero();
        assertThat(r.stderr()).contains("37 tasks: 37 succeeded, 0 failed");
        assertThat(r.stdout()).contains("ok: the stack equals the serial reference; 10 sources stacked over")
                .contains("10 blank positions stay below 3");

        // the check is not a formality: a stack missing one image's cutouts is caught
        Path venvPython = ROOT.resolve("target/stacking-venv/bin/python");
        Path cutout;
        try (var files = Files.list(wf.resolve("reference/cutouts"))) { // the image with the most cutouts
            cutout = files.max(java.util.Comparator.comparingLong(f -> f.toFile().length())).orElseThrow();
        }
        Files.delete(cutout);
        Path restacked = wf.resolve("restacked.fits");
        assertThat(Cli.program(wf, 15, venvPython.toString(),
                ROOT.resolve("examples/stacking/stacking.py").toString(), "stack",
                wf.resolve("reference/cutouts").toString(), restacked.toString()).exit()).isZero();
        Files.move(restacked, wf.resolve("results/stack.fits"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Cli.Result tampered = Cli.program(wf, 15, venvPython.toString(),
                ROOT.resolve("examples/stacking/stacking.py").toString(),
                "check", ".");
        assertThat(tampered.exit()).isNotZero();
        assertThat(tampered.stderr()).contains("differs from the serial reference");
    }
}
