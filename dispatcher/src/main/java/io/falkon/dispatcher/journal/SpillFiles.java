package io.falkon.dispatcher.journal;

import io.falkon.protocol.fs.OwnerOnly;
import io.falkon.dispatcher.core.ResultSpill;
import io.falkon.protocol.Message;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * The result spill on disk: one file per instance in a private directory, each result a journal
 * COMPLETED record (length, CRC32C, body). Results are appended through a buffer, so the scheduler
 * thread that calls it writes to memory nearly always; a file is read back only when a client takes
 * its instance over. The spill is transient: a restart starts with an empty directory (with a
 * journal, the journal holds every unacknowledged result anyway). At most {@code maxBytes} are kept;
 * beyond that, results stay in memory under the memory budget's brakes.
 */
public final class SpillFiles implements ResultSpill, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SpillFiles.class);
    /** Open append streams at once; the least recently used is closed beyond this. */
    static final int MAX_OPEN = 64;
    private static final int MAX_RECORD = 64 << 20;

    private final Path dir;
    private final long maxBytes;
    private final Map<Long, Long> sizes = new HashMap<>();
    private final LinkedHashMap<Long, OutputStream> open = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, OutputStream> eldest) {
            if (size() > MAX_OPEN) {
                closeQuietly(eldest.getKey(), eldest.getValue());
                return true;
            }
            return false;
        }
    };
    /**
     * A record being written; made at the first (Netty's buffers set themselves up in 10-15 ms, on
     * the thread that starts the dispatcher, and most runs spill nothing).
     */
    private ByteBuf buf;
    private long bytes;
    private boolean failed;
    private boolean fullWarned;

    private SpillFiles(Path dir, long maxBytes) {
        this.dir = dir;
        this.maxBytes = maxBytes;
    }

    /**
     * Removes an earlier run's spill from {@code dir} and keeps at most {@code maxBytes} there; the
     * directory (private to this user) is made when the first result is spilled.
     */
    public static SpillFiles open(Path dir, long maxBytes) throws IOException {
        deleteTree(dir);
        return new SpillFiles(dir, maxBytes);
    }

    public Path dir() {
        return dir;
    }

    @Override
    public boolean append(long instanceId, Message.DeliveredResult result) {
        if (failed) {
            return false;
        }
        if (buf == null) {
            buf = Unpooled.buffer(4096);
        }
        buf.clear();
        Records.completed(buf, instanceId, result);
        int n = buf.readableBytes();
        if (bytes + n > maxBytes) {
            if (!fullWarned) {
                fullWarned = true;
                log.warn("result spill {} is full ({} MiB): further results awaiting acknowledgement stay in memory",
                        dir, maxBytes >> 20);
            }
            return false;
        }
        try {
            OutputStream out = open.get(instanceId);
            if (out == null) {
                if (sizes.isEmpty()) {
                    OwnerOnly.directories(dir.toAbsolutePath()); // results: task outputs, owner-only
                }
                out = new BufferedOutputStream(Channels.newOutputStream(OwnerOnly.channel(file(instanceId),
                        StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND)), 1 << 16);
                open.put(instanceId, out);
            }
            buf.readBytes(out, n);
        } catch (IOException e) {
            // what was appended before stays readable; nothing more goes to a disk that fails
            failed = true;
            log.error("cannot write the result spill {}: {}; results awaiting acknowledgement stay in memory", dir,
                    e.toString());
            return false;
        }
        bytes += n;
        sizes.merge(instanceId, (long) n, Long::sum);
        return true;
    }

    @Override
    public void forEach(long instanceId, long afterSeq, Consumer<Message.DeliveredResult> each) {
        if (!sizes.containsKey(instanceId)) {
            return;
        }
        OutputStream out = open.remove(instanceId);
        if (out != null) {
            closeQuietly(instanceId, out);
        }
        Path file = file(instanceId);
        CRC32C crc = new CRC32C();
        byte[] body = new byte[1024];
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file), 1 << 16))) {
            while (true) {
                int len;
                try {
                    len = in.readInt();
                } catch (EOFException end) {
                    return;
                }
                int sum = in.readInt();
                if (len <= 0 || len > MAX_RECORD) {
                    throw new IOException("corrupt record length " + len);
                }
                if (body.length < len) {
                    body = new byte[Math.max(len, body.length * 2)];
                }
                in.readFully(body, 0, len);
                crc.reset();
                crc.update(body, 0, len);
                if ((int) crc.getValue() != sum) {
                    throw new IOException("a record whose checksum does not match");
                }
                Message.DeliveredResult r = Records.completed(Unpooled.wrappedBuffer(body, 0, len));
                if (r.seq() > afterSeq) {
                    each.accept(r);
                }
            }
        } catch (IOException | RuntimeException e) {
            // the results after the damage cannot be given back: say so loudly, never silently
            log.error("result spill {}: cannot read back the results of instance {}: {}", file,
                    Long.toUnsignedString(instanceId, 16), e.toString());
        }
    }

    @Override
    public void drop(long instanceId) {
        OutputStream out = open.remove(instanceId);
        if (out != null) {
            closeQuietly(instanceId, out);
        }
        Long size = sizes.remove(instanceId);
        if (size != null) {
            bytes -= size;
        }
        try {
            Files.deleteIfExists(file(instanceId));
        } catch (IOException e) {
            log.warn("result spill: cannot delete {}: {}", file(instanceId), e.toString());
        }
    }

    @Override
    public long bytes() {
        return bytes;
    }

    /** Closes every file and removes the directory. */
    @Override
    public void close() {
        open.forEach(this::closeQuietly);
        open.clear();
        try {
            deleteTree(dir);
        } catch (IOException e) {
            log.warn("cannot remove the result spill {}: {}", dir, e.toString());
        }
    }

    private Path file(long instanceId) {
        return dir.resolve(Long.toUnsignedString(instanceId, 16) + ".results");
    }

    private void closeQuietly(long instanceId, OutputStream out) {
        try {
            out.close();
        } catch (IOException e) {
            log.warn("result spill: cannot finish {}: {}", file(instanceId), e.toString());
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }
}
