package io.falkon.provisioner;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * Real batch schedulers on this machine for the adapter tests: starts them with the project's
 * scripts under src/test/lrm (installing the Debian packages if needed) unless they already run.
 * A scheduler that cannot be started fails the test with the reason; {@code -Dfalkon.lrm.skip=slurm}
 * (comma-separated names) skips its tests explicitly.
 */
final class Lrms {
    private static boolean slurmChecked;

    private Lrms() {
    }

    static synchronized void requireSlurm() throws Exception {
        assumeFalse(List.of(System.getProperty("falkon.lrm.skip", "").split(",")).contains("slurm"),
                "SLURM tests skipped by -Dfalkon.lrm.skip=slurm");
        if (slurmChecked) {
            return;
        }
        if (!slurmUp()) {
            Path script = Path.of("src/test/lrm/start-slurm.sh").toAbsolutePath();
            Path log = Files.createTempFile("start-slurm", ".log");
            ProcessBuilder pb = new ProcessBuilder("bash", script.toString()).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).redirectInput(new File("/dev/null"));
            pb.environment().put("SLURM_NODES", "2");
            pb.environment().put("SLURM_NODE_CPUS", "4");
            Process p = pb.start();
            boolean done = p.waitFor(10, TimeUnit.MINUTES);
            String out = Files.readString(log);
            if (!done || p.exitValue() != 0 || !slurmUp()) {
                p.destroyForcibly();
                fail("cannot start SLURM on this machine with " + script + " (it needs root and the Debian "
                        + "packages munge, slurmctld, slurmd, slurm-client); its output ends:\n"
                        + out.substring(Math.max(0, out.length() - 2000)));
            }
        }
        slurmChecked = true;
    }

    private static boolean slurmUp() throws Exception {
        if (!Files.exists(Path.of("/etc/slurm/slurm.conf"))) {
            return false; // without it every slurm command retries for a minute
        }
        Process p = new ProcessBuilder("scontrol", "ping").redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
    }
}
