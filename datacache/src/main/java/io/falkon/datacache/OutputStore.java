package io.falkon.datacache;

import io.falkon.datacache.fetch.PermanentFetchException;
import io.falkon.protocol.LogSafe;
import io.falkon.protocol.ObjectId;

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

    /** Where output {@code id} goes: a canonical object id ({@link ObjectId}), so always inside the root. */
    public Path pathOf(String id) throws IOException {
        String problem = ObjectId.problem(id);
        if (problem != null) {
            throw new PermanentFetchException("output id '" + LogSafe.text(id) + "' cannot be saved: " + problem);
        }
        return root.resolve(id);
    }

    /**
     * Saves {@code file} as output {@code id}, replacing an older file of that id: taken (moved when
     * it may be, else copied with its permission bits: {@link OutputFile}) to a partial file, forced
     * to disk, and renamed into place.
     *
     * @throws IOException if it cannot be written (the message says where and why)
     */
    public Path save(String id, OutputFile file) throws IOException {
        Path target = pathOf(id);
        Files.createDirectories(target.getParent());
        Path partial = target.resolveSibling("." + target.getFileName() + ".partial-" + ProcessHandle.current().pid()
                + "-" + seq.incrementAndGet());
        try {
            file.takeTo(partial);
            try (FileChannel c = FileChannel.open(partial, StandardOpenOption.READ)) { // fsync needs no write access (a 0444 output)
                c.force(true);
            }
            Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            try {
                file.putBack(partial);
            } catch (IOException again) {
                Files.deleteIfExists(partial);
            }
            throw new IOException("cannot save output " + id + " to " + target + ": " + e.getMessage(), e);
        }
        return target;
    }
}
