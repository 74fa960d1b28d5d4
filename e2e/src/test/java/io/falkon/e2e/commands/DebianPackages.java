package io.falkon.e2e.commands;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tools the tests need from Debian (chromium, promtool), installed by the test setup when they
 * are missing, as the SLURM and SGE tests install their daemons: {@code apt-get}, as root.
 */
final class DebianPackages {
    private static final Path APT_INSTALL = Path.of("../provisioner/src/test/lrm/apt-install.sh");

    private DebianPackages() {
    }

    /** The path of {@code command}, installing {@code pkg} first when it is not on the PATH. */
    static synchronized Path ensure(String command, String pkg) throws IOException, InterruptedException {
        Path found = which(command);
        if (found != null) {
            return found;
        }
        // the tests' one way to install: it waits for the package lock (provisioner/src/test/lrm)
        Process p = new ProcessBuilder("bash", APT_INSTALL.toString(), pkg).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        boolean done = p.waitFor(10, TimeUnit.MINUTES);
        assertThat(done && p.exitValue() == 0)
                .as("%s is not installed and apt-get install %s failed (the tests install it as root)", command, pkg)
                .isTrue();
        found = which(command);
        assertThat(found).as("%s after installing %s", command, pkg).isNotNull();
        return found;
    }

    private static Path which(String command) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            Path p = Path.of(dir, command);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }
}
