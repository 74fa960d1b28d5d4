package io.falkon.bench;

import io.falkon.executor.TempDirs;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The physical limit: a plain C loop of posix_spawn + waitpid, compiled here from the bundled
 * {@code spawnloop.c} with the machine's C compiler, run in the same benchmark run.
 */
public final class SpawnBaseline {
    private static final Pattern RATE = Pattern.compile("tasksPerSecond=([0-9.]+)");
    private final Path binary;

    private SpawnBaseline(Path binary) {
        this.binary = binary;
    }

    /** Compiles the loop; throws with the compiler's message if there is no working {@code cc}. */
    public static SpawnBaseline compile() throws IOException, InterruptedException {
        // where $TMPDIR says (the JDK's default ignores it), and gone when the JVM ends: the loop
        // runs for as long as the benchmark does
        Path dir = Files.createTempDirectory(TempDirs.root(), "falkon-spawnloop-");
        dir.toFile().deleteOnExit();
        Path src = dir.resolve("spawnloop.c");
        src.toFile().deleteOnExit();
        try (InputStream in = SpawnBaseline.class.getResourceAsStream("spawnloop.c")) {
            Files.copy(in, src, StandardCopyOption.REPLACE_EXISTING);
        }
        Path bin = dir.resolve("spawnloop");
        bin.toFile().deleteOnExit(); // registered last, deleted first: then the directory is empty
        Process cc = new ProcessBuilder("cc", "-O2", "-std=c11", "-pthread", "-o", bin.toString(), src.toString())
                .redirectErrorStream(true).start();
        String out = new String(cc.getInputStream().readAllBytes());
        if (cc.waitFor() != 0) {
            throw new IOException("cannot compile spawnloop.c: " + out);
        }
        return new SpawnBaseline(bin);
    }

    /** Spawns {@code program} {@code tasks} times from {@code spawners} threads; returns tasks/s. */
    public double run(long tasks, int spawners, String... program) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(binary.toString(), Long.toString(tasks), Integer.toString(spawners)));
        cmd.addAll(List.of(program));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(10, TimeUnit.MINUTES) || p.exitValue() != 0) {
            throw new IOException("spawnloop failed: " + out);
        }
        Matcher m = RATE.matcher(out);
        if (!m.find()) {
            throw new IOException("spawnloop printed no rate: " + out);
        }
        return Double.parseDouble(m.group(1));
    }
}
