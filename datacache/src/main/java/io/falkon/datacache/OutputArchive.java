package io.falkon.datacache;

import io.falkon.datacache.fetch.PermanentFetchException;
import io.falkon.protocol.LogSafe;
import io.falkon.protocol.ObjectId;

import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Many small outputs as one file (seed 003: "all results in one file per node instead of millions
 * of small files"): declared outputs marked archived are appended to this executor's current tar
 * archive in the output store, {@code ROOT/archives/PREFIX-N.tar}, each entry named by its object
 * id, and forced to disk before the task is reported successful, so the archive holds only whole
 * entries at every moment and a reader (tar, or {@link #read} by offset) sees each one once its
 * task has succeeded. Past {@link #threshold} bytes the archive is finished (tar's end blocks) and
 * the next entry starts a new one; {@link #close} finishes the last. Tar headers are Commons
 * Compress's (PAX for ids over 100 bytes).
 */
public final class OutputArchive implements AutoCloseable {
    /** An archive is finished once it holds this much (64 MiB), and a new one begun. */
    public static final long DEFAULT_THRESHOLD = 64L << 20;

    /** Where one entry's bytes are: the archive (relative to the output root), offset, size, SHA-256. */
    public record Entry(String archive, long offset, long size, String sha256) {
    }

    private final Path root;
    private final String prefix;
    private final long threshold;
    private int seq;
    private FileChannel channel;
    private Counting counted;
    private TarArchiveOutputStream tar;
    private String current;

    /**
     * @param root   the output root (the store)
     * @param prefix names this executor's archives (its id; characters other than letters, digits,
     *               dot, dash and underscore become underscores)
     */
    public OutputArchive(Path root, String prefix, long threshold) {
        this.root = root.toAbsolutePath().normalize();
        this.prefix = prefix.replaceAll("[^A-Za-z0-9._-]", "_") + "-" + ProcessHandle.current().pid() + "-"
                + System.currentTimeMillis();
        this.threshold = threshold;
    }

    /**
     * Appends {@code file} as entry {@code id} and forces it to disk; returns where its bytes are. An
     * id that is not canonical ({@link ObjectId}: a ".." or an absolute member name, a NUL) is refused,
     * so that no extractor writes an entry outside its destination.
     */
    public synchronized Entry append(String id, Path file) throws IOException {
        String problem = ObjectId.problem(id);
        if (problem != null) {
            throw new PermanentFetchException("output id '" + LogSafe.text(id) + "' cannot name an archive member: "
                    + problem);
        }
        if (tar == null) {
            begin();
        }
        long size = Files.size(file);
        TarArchiveEntry e = new TarArchiveEntry(id);
        e.setSize(size);
        e.setModTime(Files.getLastModifiedTime(file));
        String sha;
        long offset;
        try {
            tar.putArchiveEntry(e);
            offset = counted.count; // the header records are out: what follows is the entry's bytes
            MessageDigest md = sha256();
            try (InputStream in = new DigestInputStream(Files.newInputStream(file), md)) {
                in.transferTo(tar);
            }
            tar.closeArchiveEntry();
            tar.flush();
            channel.force(false);
            sha = HexFormat.of().formatHex(md.digest());
        } catch (IOException | RuntimeException ex) {
            // an entry half written would be read by the next: this archive ends here
            String which = current;
            abandon();
            throw new IOException("cannot append output " + id + " to the archive " + which + ": " + ex.getMessage(), ex);
        }
        Entry entry = new Entry(current, offset, size, sha);
        if (counted.count >= threshold) {
            finish();
        }
        return entry;
    }

    private void begin() throws IOException {
        Path dir = root.resolve("archives");
        Files.createDirectories(dir);
        current = "archives/" + prefix + "-" + (++seq) + ".tar";
        channel = FileChannel.open(root.resolve(current), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        counted = new Counting(Channels.newOutputStream(channel));
        tar = new TarArchiveOutputStream(counted, 512); // one record per block: each entry is out when closed
        tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
        tar.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
    }

    /** Writes tar's end blocks and closes the archive (the next append begins another). */
    private void finish() throws IOException {
        try {
            tar.finish();
            tar.flush();
            channel.force(false);
        } finally {
            abandon();
        }
    }

    private void abandon() {
        try {
            if (channel != null) {
                channel.close();
            }
        } catch (IOException ignored) {
            // the entries before were forced to disk already
        }
        tar = null;
        channel = null;
        counted = null;
    }

    /** The archive being written, or null. */
    public synchronized String current() {
        return current == null || tar == null ? null : current;
    }

    @Override
    public synchronized void close() throws IOException {
        if (tar != null) {
            finish();
        }
    }

    /** The bytes of one entry, read from its archive under {@code root} and checked against its SHA-256. */
    public static byte[] read(Path root, Entry e) throws IOException {
        Path archive = root.resolve(e.archive()).normalize();
        if (!archive.startsWith(root.toAbsolutePath().normalize()) && !archive.startsWith(root.normalize())) {
            throw new IOException("archive " + e.archive() + " is outside " + root);
        }
        if (e.size() > Integer.MAX_VALUE - 8) {
            throw new IOException("entry of " + e.size() + " bytes is too large to read at once");
        }
        byte[] b = new byte[(int) e.size()];
        try (FileChannel c = FileChannel.open(archive, StandardOpenOption.READ)) {
            java.nio.ByteBuffer buf = java.nio.ByteBuffer.wrap(b);
            long at = e.offset();
            while (buf.hasRemaining()) {
                int n = c.read(buf, at);
                if (n < 0) {
                    throw new IOException(e.archive() + " ends before the entry at " + e.offset() + " does");
                }
                at += n;
            }
        }
        String sha = HexFormat.of().formatHex(sha256().digest(b));
        if (!sha.equals(e.sha256())) {
            throw new IOException("the entry at " + e.offset() + " of " + e.archive() + " does not match its SHA-256");
        }
        return b;
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Counts what reaches the file: the offsets of entries. */
    private static final class Counting extends FilterOutputStream {
        long count;

        Counting(OutputStream out) {
            super(out);
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
            count++;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            count += len;
        }
    }
}
