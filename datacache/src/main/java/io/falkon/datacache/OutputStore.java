package io.falkon.datacache;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Where declared outputs are kept for good: {@code ROOT/ID}, written through before the task is
 * reported successful (copied, flushed to disk, then renamed into place, so that a reader sees the
 * whole file or none). This is the shared store (or the directory given for outputs); the executor's
 * cache may also keep a copy, but is never the only one.
 */
public final class OutputStore {
    private final Path root;
    private final AtomicLong seq = new AtomicLong();

    public OutputStore(Path root) {
        this.root = root.toAbsolutePath().normalize();
    }

    public Path root() {
        return root;
    }

    /** Where output {@code id} goes; the id must stay inside the root. */
    public Path pathOf(String id) throws IOException {
        Path p = root.resolve(id).normalize();
        if (id.isEmpty() || !p.startsWith(root) || p.equals(root)) {
            throw new PermanentFetchException("output id '" + id + "' leaves the output directory " + root);
        }
        return p;
    }

    /**
     * Saves {@code file} as output {@code id}, replacing an older file of that id.
     *
     * @throws IOException if it cannot be written (the message says where and why)
     */
    public Path save(String id, Path file) throws IOException {
        Path target = pathOf(id);
        Files.createDirectories(target.getParent());
        Path partial = target.resolveSibling("." + target.getFileName() + ".partial-" + ProcessHandle.current().pid()
                + "-" + seq.incrementAndGet());
        try {
            Files.copy(file, partial, StandardCopyOption.REPLACE_EXISTING);
            try (FileChannel c = FileChannel.open(partial, StandardOpenOption.WRITE)) {
                c.force(true);
            }
            Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            Files.deleteIfExists(partial);
            throw new IOException("cannot save output " + id + " to " + target + ": " + e.getMessage(), e);
        }
        return target;
    }
}
