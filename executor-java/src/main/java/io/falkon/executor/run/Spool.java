package io.falkon.executor.run;

import io.falkon.protocol.Execution;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A slot's two output files. A task's stdout and stderr go to them (truncated at each start),
 * and the first {@code cap} bytes of each are read back when it ends. Files instead of pipes: no
 * reader threads, and no read that hangs when a stray grandchild keeps a pipe open.
 */
final class Spool {
    private static final byte[] EMPTY = new byte[0];

    final File stdout;
    final File stderr;
    final int cap;

    Spool(Path dir, int slot, int cap) {
        this.stdout = dir.resolve("slot-" + slot + ".out").toFile();
        this.stderr = dir.resolve("slot-" + slot + ".err").toFile();
        this.cap = cap;
    }

    /** Bytes written so far by the running task (to check the spool limit). */
    long size() {
        return stdout.length() + stderr.length();
    }

    /** The truncation flags for the output now in the files. */
    int flags() {
        int flags = 0;
        if (stdout.length() > cap) {
            flags |= Execution.STDOUT_TRUNCATED;
        }
        if (stderr.length() > cap) {
            flags |= Execution.STDERR_TRUNCATED;
        }
        return flags;
    }

    byte[] stdoutBytes() {
        return read(stdout);
    }

    byte[] stderrBytes() {
        return read(stderr);
    }

    private byte[] read(File f) {
        long len = f.length();
        if (len == 0 || cap == 0) {
            return EMPTY;
        }
        try (InputStream in = Files.newInputStream(f.toPath())) {
            return in.readNBytes((int) Math.min(len, cap));
        } catch (IOException e) {
            return ("<output unreadable: " + e.getMessage() + ">").getBytes(StandardCharsets.UTF_8);
        }
    }
}
