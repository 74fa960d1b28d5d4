package io.falkon.protocol.fs;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;

/**
 * Files and directories that hold secrets or task data (the journal, the result spill, cached
 * objects, instance records, results files): readable by their owner alone, whatever the umask.
 * The mode is given when the file is created, so there is no moment at which another user could
 * open it; the umask can only take bits away from it.
 */
public final class OwnerOnly {
    private static final Set<PosixFilePermission> FILE = EnumSet.of(PosixFilePermission.OWNER_READ,
            PosixFilePermission.OWNER_WRITE);
    private static final Set<PosixFilePermission> DIR = EnumSet.of(PosixFilePermission.OWNER_READ,
            PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE);

    private OwnerOnly() {
    }

    /** {@code rw-------}, for a file being created. */
    public static FileAttribute<Set<PosixFilePermission>> file() {
        return PosixFilePermissions.asFileAttribute(FILE);
    }

    /** {@code rwx------}, for a directory being created. */
    public static FileAttribute<Set<PosixFilePermission>> dir() {
        return PosixFilePermissions.asFileAttribute(DIR);
    }

    /**
     * Creates {@code dir} and any missing parents, each {@code rwx------}; an existing directory
     * is left as it is (it is someone's choice, and the files made in it are owner-only anyway).
     */
    public static Path directories(Path dir) throws IOException {
        if (Files.isDirectory(dir)) {
            return dir;
        }
        return Files.createDirectories(dir, dir());
    }

    /** Opens a file, creating it {@code rw-------} if it does not exist. */
    public static FileChannel channel(Path file, OpenOption... options) throws IOException {
        return FileChannel.open(file, Set.of(options), file());
    }

    /** A new temporary file in {@code dir}, {@code rw-------}. */
    public static Path tempFile(Path dir, String prefix, String suffix) throws IOException {
        return Files.createTempFile(dir, prefix, suffix, file());
    }
}
