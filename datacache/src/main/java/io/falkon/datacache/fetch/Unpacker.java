package io.falkon.datacache.fetch;

import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.compressors.gzip.GzipCompressorInputStream;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** Unpacks a fetched object into the form a task asked for (Commons Compress). */
public final class Unpacker {
    private Unpacker() {
    }

    /**
     * Unpacks {@code packed} into {@code target} (a file for gzip, a directory for tar); returns the
     * bytes written.
     *
     * @throws IOException if the archive is damaged or an entry would land outside the target
     */
    /** Every member of a (possibly concatenated) gzip stream, as gzip(1) reads it. */
    private static InputStream gunzip(InputStream raw) throws IOException {
        return GzipCompressorInputStream.builder().setInputStream(raw).setDecompressConcatenated(true).get();
    }

    public static long unpack(Path packed, ObjectRef.Unpack mode, Path target) throws IOException {
        try (InputStream raw = new BufferedInputStream(Files.newInputStream(packed), 1 << 16)) {
            switch (mode) {
                case GZIP -> {
                    try (InputStream in = gunzip(raw)) {
                        return Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
                    }
                }
                case TAR -> {
                    return untar(raw, target);
                }
                case TAR_GZ -> {
                    try (InputStream in = gunzip(raw)) {
                        return untar(in, target);
                    }
                }
                default -> throw new IllegalArgumentException("nothing to unpack for " + mode);
            }
        }
    }

    private static long untar(InputStream in, Path dir) throws IOException {
        Files.createDirectories(dir);
        Path root = dir.toAbsolutePath().normalize();
        long total = 0;
        try (TarArchiveInputStream tar = new TarArchiveInputStream(in)) {
            TarArchiveEntry e;
            while ((e = tar.getNextEntry()) != null) {
                Path p = root.resolve(e.getName()).normalize();
                if (!p.startsWith(root)) {
                    throw new PermanentFetchException("tar entry '" + e.getName()
                            + "' would be written outside its directory");
                }
                if (e.isSymbolicLink() || e.isLink()) {
                    // a link could lead a task, or the cache, to a file outside the object
                    throw new PermanentFetchException("tar entry '" + e.getName() + "' is a " + (e.isSymbolicLink()
                            ? "symbolic" : "hard") + " link to '" + e.getLinkName() + "': archives unpacked for "
                            + "tasks may hold only files and directories");
                }
                if (e.isDirectory()) {
                    Files.createDirectories(p);
                } else if (e.isFile()) {
                    Files.createDirectories(p.getParent());
                    total += Files.copy(tar, p, StandardCopyOption.REPLACE_EXISTING);
                }
                // devices and fifos in an archive are skipped: data objects are plain files
            }
        }
        return total;
    }
}
