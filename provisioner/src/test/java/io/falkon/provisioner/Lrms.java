package io.falkon.provisioner;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import java.io.IOException;

/**
 * Real batch schedulers on this machine for the adapter tests: started with the project's scripts
 * under src/test/lrm (which install the Debian packages if needed; they need root) unless already
 * running. A scheduler that cannot be started fails the test with the reason;
 * {@code -Dfalkon.lrm.skip=slurm,sge} skips those tests explicitly. A scheduler the tests started
 * is stopped again when their JVM exits (a test run leaves nothing running); one that was running
 * before is left as it was.
 */
public final class Lrms {
    private static final Set<String> UP = new HashSet<>();

    private Lrms() {
    }

    /**
     * SLURM: slurmctld and two slurmd "nodes" (node1, node2) of 4 CPUs each, each with a {@code gpu}
     * GRES of 2 devices that are FAKE (empty files: Slurm hands jobs their indices in
     * CUDA_VISIBLE_DEVICES; nothing is a GPU).
     */
    public static void requireSlurm() throws Exception {
        require("slurm", Lrms::slurmUp, "start-slurm.sh", Map.of("SLURM_NODES", "2", "SLURM_NODE_CPUS", "4",
                "SLURM_GPUS", "2"));
    }

    /** Slurm's PBS/Torque wrappers (qsub, qstat, qdel) over the SLURM above: PBS syntax, not PBS itself. */
    static Map<String, String> requirePbsWrappers() throws Exception {
        requireSlurm();
        Path bin = Path.of("/opt/lrm/slurm-torque/usr/bin");
        if (!Files.isExecutable(bin.resolve("qsub"))) {
            fail("Slurm's Torque wrappers are not unpacked in " + bin + " (start-slurm.sh does it with "
                    + "SLURM_PBS_WRAPPERS=1, the default)");
        }
        return Map.of("PATH", bin + ":" + System.getenv("PATH"));
    }

    /** SGE: sge_qmaster and one sge_execd, queue all.q@localhost with 8 slots, PE smp. */
    public static void requireSge() throws Exception {
        require("sge", Lrms::sgeUp, "start-sge.sh", Map.of("SGE_SLOTS", "8"));
    }

    private static synchronized void require(String name, Callable<Boolean> up, String script, Map<String, String> env)
            throws Exception {
        assumeFalse(List.of(System.getProperty("falkon.lrm.skip", "").split(",")).contains(name),
                name + " tests skipped by -Dfalkon.lrm.skip");
        if (UP.contains(name)) {
            return;
        }
        if (!up.call()) {
            Path path = scripts().resolve(script).toAbsolutePath();
            Path log = Files.createTempFile(name + "-start", ".log");
            ProcessBuilder pb = new ProcessBuilder("bash", path.toString()).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).redirectInput(new File("/dev/null"));
            pb.environment().putAll(env);
            Process p = pb.start();
            boolean done = p.waitFor(10, TimeUnit.MINUTES);
            String out = Files.readString(log);
            if (!done || p.exitValue() != 0 || !up.call()) {
                p.destroyForcibly();
                fail("cannot start " + name + " on this machine with " + path + " (it needs root and apt access to "
                        + "the Debian packages); its output ends:\n" + out.substring(Math.max(0, out.length() - 2000)));
            }
            Files.delete(log); // it started: its output is not needed
            Path stop = path.resolveSibling("stop-" + name + ".sh");
            Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(stop), "stop-" + name));
        }
        UP.add(name);
    }

    /** Stops a scheduler these tests started (a shutdown hook: the run is over). */
    private static void stop(Path script) {
        try {
            Process p = new ProcessBuilder("bash", script.toString()).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectInput(new File("/dev/null")).start();
            if (!p.waitFor(2, TimeUnit.MINUTES)) {
                p.destroyForcibly();
            }
        } catch (IOException e) {
            // nothing more can be done while the JVM exits
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The start scripts: this module's, also when another module's tests run from beside it. */
    private static Path scripts() {
        Path here = Path.of("src/test/lrm");
        return Files.isDirectory(here) ? here : Path.of("../provisioner/src/test/lrm");
    }

    private static boolean slurmUp() throws Exception {
        if (!Files.exists(Path.of("/etc/slurm/slurm.conf"))) {
            return false; // without it every slurm command retries for a minute
        }
        return run("scontrol", "ping").exit == 0;
    }

    private static boolean sgeUp() throws Exception {
        if (run("qconf", "-sh").exit != 0) {
            return false;
        }
        // the execd is ready when its queue instance shows no state letters (5 columns)
        for (String line : run("qstat", "-f", "-q", "all.q").out.split("\n")) {
            String[] f = line.strip().split("\\s+");
            if (f.length == 5 && f[0].equals("all.q@localhost")) {
                return true;
            }
        }
        return false;
    }

    private record Ran(int exit, String out) {
    }

    private static Ran run(String... cmd) throws Exception {
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            return new Ran(127, e.getMessage()); // not installed
        }
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return new Ran(124, out);
        }
        return new Ran(p.exitValue(), out);
    }
}
