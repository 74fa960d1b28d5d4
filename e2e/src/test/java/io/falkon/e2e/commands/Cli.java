package io.falkon.e2e.commands;

import io.falkon.cli.Falkon;
import io.falkon.executor.LocalExecutors;
import io.falkon.protocol.auth.TokenSource;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs the real {@code falkon} command as a separate process, as a user would. Every process a
 * test starts in a directory shares {@link #home} as its {@code ~/.falkon}: the first dispatcher
 * writes its token there and every later command finds it, as on a real account.
 */
final class Cli {
    /** The {@code FALKON_HOME} of the processes started in {@code workDir}. */
    static Path home(Path workDir) {
        return workDir.resolve(".falkon-home");
    }

    /**
     * Makes {@code pb} run as a user whose {@code ~/.falkon} is {@link #home}, and whose temporary
     * files ({@code $TMPDIR}) are under it: a killed executor's spool goes with the test's directory.
     */
    static ProcessBuilder asUser(ProcessBuilder pb, Path workDir) {
        pb.environment().put(TokenSource.ENV_HOME, home(workDir).toString());
        // what the process and its executors keep as temporary files (spools) goes with the test's directory
        Path tmp = home(workDir).resolve("tmp");
        try {
            Files.createDirectories(tmp);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        pb.environment().put("TMPDIR", tmp.toString());
        pb.environment().remove(TokenSource.ENV);
        pb.environment().remove(TokenSource.ENV_FILE);
        return pb;
    }

    /** The token the dispatcher of {@code workDir} wrote. */
    static String token(Path workDir) {
        return TokenSource.read(home(workDir).resolve("token")).value();
    }

    record Result(int exit, String stdout, String stderr) {
    }

    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();

    /**
     * The {@code falkon} command as a user runs it, bin/falkon, on this test's JVM with these JVM
     * options (as FALKON_JAVA_OPTS; none: bin/falkon's defaults). It runs the build's jars with the
     * class data archive the build made for them: started from this test's class path instead,
     * without the archive, each process took twice the CPU (0.99 s against 0.46 s for a one-line
     * {@code falkon run}), and the end-to-end suite starts hundreds. bin/falkon execs the JVM (and
     * {@code executor --impl c} the C executor), so the process started is the program itself: a
     * signal to it reaches it. Options are split on spaces, as bin/falkon splits FALKON_JAVA_OPTS.
     */
    static List<String> falkon(List<String> jvm) {
        List<String> cmd = new ArrayList<>(List.of("env", "JAVA_HOME=" + System.getProperty("java.home")));
        if (!jvm.isEmpty()) {
            cmd.add("FALKON_JAVA_OPTS=" + String.join(" ", jvm));
        }
        cmd.add(ROOT.resolve("bin/falkon").toString());
        return cmd;
    }

    /**
     * {@code java ... io.falkon.cli.Falkon} on this test's class path, for the one test that needs
     * the JVM itself as the process: bin/falkon would exec the C executor in its place.
     */
    static List<String> falkonJvm(List<String> jvm) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(System.getProperty("java.home") + "/bin/java"));
        cmd.addAll(jvm);
        cmd.add("-D" + LocalExecutors.C_PROPERTY + "=" + LocalExecutors.cExecutable());
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Falkon.class.getName()));
        return cmd;
    }

    static Result run(Path workDir, String... args) throws IOException, InterruptedException {
        return runWithInput(workDir, null, args);
    }

    static Result runWithInput(Path workDir, String stdin, String... args) throws IOException, InterruptedException {
        List<String> cmd = falkon(List.of("-XX:TieredStopAtLevel=1"));
        cmd.addAll(List.of(args));
        Path out = Files.createTempFile(workDir, "out", ".txt");
        Path err = Files.createTempFile(workDir, "err", ".txt");
        ProcessBuilder pb = asUser(new ProcessBuilder(cmd).directory(workDir.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile()), workDir);
        if (stdin == null) {
            pb.redirectInput(new File("/dev/null"));
        }
        Process p = pb.start();
        if (stdin != null) {
            p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
            p.getOutputStream().close();
        }
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IllegalStateException("falkon " + String.join(" ", args) + " did not finish in 5 minutes");
        }
        return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    /**
     * Runs another program (an example's script, say) in {@code workDir} with no input, its output
     * in files (so neither stream can fill its pipe), and kills it if it has not finished in
     * {@code minutes}.
     */
    static Result program(Path workDir, int minutes, String... cmd) throws IOException, InterruptedException {
        Path out = Files.createTempFile(workDir, "out", ".txt");
        Path err = Files.createTempFile(workDir, "err", ".txt");
        Process p = new ProcessBuilder(cmd).directory(workDir.toFile()).redirectInput(new File("/dev/null"))
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(minutes, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IllegalStateException(String.join(" ", cmd) + " did not finish in " + minutes + " minutes");
        }
        return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
    }
}
