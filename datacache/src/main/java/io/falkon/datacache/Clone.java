package io.falkon.datacache;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * A task's private copy of a cached object (a file, or the directory of an unpacked archive): the
 * task may change or delete it, and the cache's own copy, which other tasks and peers read, stays
 * as it was. Copies stay on the executor's local disk.
 */
public final class Clone {
    private Clone() {
    }

    /** Copies {@code from} (a file or a directory tree, not following links) to the new path {@code to}. */
    public static void copy(Path from, Path to) throws IOException {
        if (!Files.isDirectory(from, LinkOption.NOFOLLOW_LINKS)) {
            Files.copy(from, to, LinkOption.NOFOLLOW_LINKS);
            return;
        }
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Path target = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f, LinkOption.NOFOLLOW_LINKS)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(f, target, LinkOption.NOFOLLOW_LINKS);
                }
            }
        }
    }
}
