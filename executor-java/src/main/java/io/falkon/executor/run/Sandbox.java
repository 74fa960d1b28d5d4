package io.falkon.executor.run;

import io.falkon.datacache.OutputFile;
import io.falkon.protocol.LogSafe;
import io.falkon.protocol.TaskOutput;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A task's sandbox: the fresh directory its inputs are staged into and, unless the task names a
 * directory of its own, its working directory; removed after the task without following a link out
 * of it. It holds the one rule for what may leave a sandbox (docs/data-diffusion.md, "What may leave
 * a sandbox"; the C executor's {@code outfile.c} states the same rule):
 * <ul>
 *   <li>an output in the sandbox (a relative path, the task naming no directory) is resolved without
 *       following a link out of the sandbox: a symbolic link is followed while it stays inside, and
 *       one that leads out refuses the output. A regular file reached without any link, with one name
 *       (one hard link), is the sandbox's own and may be moved; any other is copied;</li>
 *   <li>an output anywhere else (an absolute path, or the task's own working directory) is the
 *       user's file: copied, never moved, renamed or deleted.</li>
 * </ul>
 * The check is made on real paths after the task's process group has ended; a process the task
 * left running could race it, as it could do anything else its user may. (The C executor resolves
 * and takes the file through one descriptor, which leaves no such gap.)
 */
final class Sandbox implements AutoCloseable {
    private final Path dir;
    private Path real;

    Sandbox(Path dir) {
        this.dir = dir;
    }

    Path dir() {
        return dir;
    }

    void create() throws IOException {
        Files.createDirectories(dir);
        real = dir.toRealPath();
    }

    /** A declared output refused by the rule: the message names it. */
    static final class Refused extends IOException {
        Refused(String message) {
            super(message);
        }
    }

    /**
     * Where output {@code o} of a task that ran in {@code workDir} is: null when there is no such
     * regular file (not written).
     *
     * @throws Refused when it leads out of the sandbox through a symbolic link
     */
    OutputFile output(Path workDir, TaskOutput o) throws Refused {
        Path declared = Path.of(o.path());
        boolean inSandbox = !declared.isAbsolute() && workDir.equals(dir);
        Path lexical = inSandbox ? real.resolve(declared) : workDir.resolve(declared);
        Path file;
        try {
            file = lexical.toRealPath();
        } catch (IOException e) {
            return null; // no such file, a link to nothing, a loop of links: not written
        }
        if (inSandbox && !file.startsWith(real)) {
            throw new Refused("declared output " + LogSafe.text(o.path()) + " (id " + LogSafe.text(o.id())
                    + ") leads out of the task's sandbox through a symbolic link: refused (docs/data-diffusion.md, "
                    + "\"What may leave a sandbox\")");
        }
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            return null;
        }
        return new OutputFile(file, inSandbox && file.equals(lexical) && links(file) == 1);
    }

    private static int links(Path file) {
        try {
            return (Integer) Files.getAttribute(file, "unix:nlink", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException | UnsupportedOperationException e) {
            return 2; // unknown: treated as shared, so copied
        }
    }

    @Override
    public void close() {
        deleteTree(dir);
    }

    /** Removes a tree without following links: a link in it is removed, never what it points to. */
    static void deleteTree(Path p) {
        if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> files = Files.walk(p)) { // does not follow links
            files.sorted(Comparator.reverseOrder()).forEach(f -> {
                if (!Files.isSymbolicLink(f)) { // chmod would change what a link points to
                    f.toFile().setWritable(true);
                }
                f.toFile().delete();
            });
        } catch (IOException e) {
            // a leftover sandbox costs disk, not correctness
        }
    }
}
