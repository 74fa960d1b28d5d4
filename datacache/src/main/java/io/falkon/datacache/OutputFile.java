package io.falkon.datacache;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;

/**
 * A task's declared output as the executor found it after the run: the file to read ({@code path},
 * with no symbolic link left in it), and whether Falkon may move it ({@code movable}: the sandbox's
 * own file, which goes with the sandbox) or must copy it (a file of the user's, or one a link leads
 * to). The executor's {@code Sandbox} decides which, by the rule docs/data-diffusion.md states
 * ("What may leave a sandbox"); the store and the cache only carry it out: nothing here moves,
 * renames or deletes a file that is not movable.
 *
 * @param path    the file (a real path: no link is followed from here on)
 * @param movable the sandbox's own file, reached without a link, with one name
 */
public record OutputFile(Path path, boolean movable) {
    /** The same file, copied from now on (it was copied into the store, and the sandbox keeps it). */
    public OutputFile copied() {
        return movable ? new OutputFile(path, false) : this;
    }

    /**
     * Puts the file at {@code target}, a new name of Falkon's: renamed there when it may be moved
     * (and can be: the same file system), else copied with the file's permission bits, as a move
     * keeps them. A symbolic link found at {@code path} now (swapped in since the check) is not
     * followed: it fails.
     */
    public void takeTo(Path target) throws IOException {
        if (movable && !Files.isSymbolicLink(path)) {
            try {
                Files.move(path, target, StandardCopyOption.ATOMIC_MOVE);
                return;
            } catch (java.nio.file.AtomicMoveNotSupportedException e) {
                // another file system: copied below
            }
        }
        Set<PosixFilePermission> mode = Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS);
        Files.copy(path, target, LinkOption.NOFOLLOW_LINKS);
        Files.setPosixFilePermissions(target, mode);
    }

    /** Undoes {@link #takeTo}: a moved file goes back where the task left it; a copy is deleted. */
    public void putBack(Path from) throws IOException {
        if (movable && !Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
            Files.move(from, path, StandardCopyOption.ATOMIC_MOVE);
        } else {
            Files.deleteIfExists(from);
        }
    }
}
