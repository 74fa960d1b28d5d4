package io.falkon.cli;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs the real {@code falkon} command as a separate process, as a user would. */
final class Cli {
    record Result(int exit, String stdout, String stderr) {
    }

    static Result run(Path workDir, String... args) throws IOException, InterruptedException {
        return runWithInput(workDir, null, args);
    }

    static Result runWithInput(Path workDir, String stdin, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(System.getProperty("java.home") + "/bin/java",
                "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), Falkon.class.getName()));
        cmd.addAll(List.of(args));
        Path out = Files.createTempFile(workDir, "out", ".txt");
        Path err = Files.createTempFile(workDir, "err", ".txt");
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(workDir.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile());
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
}
