package io.falkon.provisioner.lrm;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Runs a scheduler's command line tools (sbatch, squeue, ...) and reports failures with what they printed. */
public class Shell {
    private final Map<String, String> env;
    private final Duration timeout;

    /** @param env extra environment for every command (e.g. PATH with the scheduler's tools first) */
    public Shell(Map<String, String> env, Duration timeout) {
        this.env = Map.copyOf(env);
        this.timeout = timeout;
    }

    public Shell() {
        this(Map.of(), Duration.ofSeconds(60));
    }

    /** What a command printed and how it exited. */
    public record Result(int exit, String stdout, String stderr) {
    }

    /** Runs {@code cmd}; fails with its stderr when it exits non-zero. */
    public String check(List<String> cmd) throws IOException {
        return check(cmd, null);
    }

    /**
     * The same, run in {@code directory} (null: this process's): a submission runs in the job's work
     * directory, where a scheduler that ignores the script's output directives leaves its files.
     */
    public String check(List<String> cmd, Path directory) throws IOException {
        Result r = run(cmd, directory);
        if (r.exit() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed (exit " + r.exit() + "): "
                    + (r.stderr().isBlank() ? r.stdout().strip() : r.stderr().strip()));
        }
        return r.stdout();
    }

    /** Runs {@code cmd} and returns how it ended, whatever that was. */
    public Result run(List<String> cmd) throws IOException {
        return run(cmd, null);
    }

    private Result run(List<String> cmd, Path directory) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(resolve(cmd)).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        if (directory != null) {
            pb.directory(directory.toFile());
        }
        pb.environment().putAll(env);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new IOException("cannot run " + cmd.get(0) + ": " + e.getMessage()
                    + " (is the scheduler's client installed and on the PATH?)", e);
        }
        CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> readAll(p.getErrorStream()));
        byte[] out = readAll(p.getInputStream());
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + " did not finish within " + timeout.toSeconds() + " s");
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while running " + cmd.get(0), e);
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8),
                new String(err.join(), StandardCharsets.UTF_8));
    }

    /**
     * The command with its program looked up in this shell's PATH: the JDK looks programs up in the
     * PATH of this JVM, not in the one given to the child (and two schedulers may both have a qsub).
     */
    private List<String> resolve(List<String> cmd) {
        String path = env.get("PATH");
        if (path == null || cmd.get(0).contains("/")) {
            return cmd;
        }
        for (String dir : path.split(":")) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, cmd.get(0));
            if (Files.isExecutable(p)) {
                List<String> out = new ArrayList<>(cmd);
                out.set(0, p.toString());
                return out;
            }
        }
        return cmd;
    }

    private static byte[] readAll(InputStream in) {
        try (in) {
            return in.readAllBytes();
        } catch (IOException e) {
            return new byte[0];
        }
    }
}
