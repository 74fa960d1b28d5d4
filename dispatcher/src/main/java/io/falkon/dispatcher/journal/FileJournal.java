package io.falkon.dispatcher.journal;

import io.falkon.dispatcher.core.InstanceRecord;
import io.falkon.dispatcher.core.Journal;
import io.falkon.dispatcher.core.Recovery;
import io.falkon.protocol.fs.OwnerOnly;
import io.falkon.protocol.Message;
import io.falkon.protocol.time.Clock;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

/**
 * The dispatcher's append-only journal in one directory ({@code falkon dispatcher --journal DIR}).
 *
 * <p>File {@value #FILE}: an 8-byte header ({@code "FKJ1"}, version 2), then records framed as
 * {@code length:u32 crc32c:u32 body} (bodies in {@link Records}). The scheduler thread encodes a
 * batch's records into memory; at the end of the batch a writer thread appends them, forces them
 * to disk per the {@link FsyncPolicy}, and only then sends the batch's replies. Batches that queue
 * up during an fsync are written and forced together (group commit).
 *
 * <p>On open the journal is replayed: instances come back detached with fresh leases, accepted
 * tasks without a final result are re-queued, final results not acknowledged are kept for
 * redelivery. A torn or corrupt record (a crash in the middle of a write) ends the replay: the file
 * is truncated there with a warning. Then the live state is written to a fresh file (compaction),
 * and again whenever the file has grown to four times its compacted size (at least 64 MiB).
 */
public final class FileJournal implements Journal, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(FileJournal.class);
    public static final String FILE = "falkon.journal";
    static final int MAGIC = 0x464B4A31; // "FKJ1"
    static final int VERSION = 2;
    static final int HEADER = 8;
    static final int MAX_RECORD = 64 << 20;
    static final long MIN_COMPACT_BYTES = 64L << 20;
    static final long BATCH_SYNC_MILLIS = 50;

    private sealed interface Command permits Append, Compact, Barrier, Stop {
    }

    private record Barrier(CompletableFuture<Void> done) implements Command {
    }

    private record Append(ByteBuf data, Runnable send) implements Command {
    }

    private record Compact(ByteBuf snapshot) implements Command {
    }

    private record Stop() implements Command {
    }

    private final Path dir;
    private final Path file;
    private final FsyncPolicy policy;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final Replay replayed;
    private final BlockingQueue<Command> commands = new LinkedBlockingQueue<>();
    private final AtomicInteger outstanding = new AtomicInteger();
    private final Thread writer;
    private FileChannel channel;
    /** Records of the current batch (scheduler thread only). */
    private final Recorder batch = new Recorder(Unpooled.buffer(64 * 1024));
    private volatile long size;
    private volatile long compactedSize;
    private volatile boolean compactionQueued;
    private volatile boolean closed;

    private FileJournal(Path dir, FsyncPolicy policy, FileChannel lockChannel, FileLock lock, Replay replayed) {
        this.dir = dir;
        this.file = dir.resolve(FILE);
        this.policy = policy;
        this.lockChannel = lockChannel;
        this.lock = lock;
        this.replayed = replayed;
        this.writer = new Thread(this::writeLoop, "falkon-journal");
        this.writer.setDaemon(true);
    }

    /**
     * Opens (or creates) the journal in {@code dir}, replays it, and compacts it. Call
     * {@link #restoreInto} on the scheduler before it starts.
     *
     * @throws IOException if the directory is unusable or another dispatcher holds it
     */
    public static FileJournal open(Path dir, FsyncPolicy policy) throws IOException {
        OwnerOnly.directories(dir); // it holds instance secrets, commands, environments and outputs
        FileChannel lockChannel = OwnerOnly.channel(dir.resolve(FILE + ".lock"), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = lockChannel.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null; // held by this very JVM
        }
        if (lock == null) {
            lockChannel.close();
            throw new IOException("another dispatcher is using the journal in " + dir);
        }
        try {
            Replay replay = replay(dir.resolve(FILE));
            FileJournal j = new FileJournal(dir, policy, lockChannel, lock, replay);
            j.rewrite(buf -> replay.writeTo(buf));
            j.writer.start();
            return j;
        } catch (IOException | RuntimeException e) {
            lock.release();
            lockChannel.close();
            throw e;
        }
    }

    /** Reads every intact record; truncates the file at the first torn or corrupt one. */
    static Replay replay(Path file) throws IOException {
        Replay replay = new Replay();
        if (!Files.exists(file)) {
            return replay;
        }
        long fileSize = Files.size(file);
        long offset = 0;
        String damage = null;
        try (InputStream raw = Files.newInputStream(file);
             DataInputStream in = new DataInputStream(new BufferedInputStream(raw, 1 << 16))) {
            if (fileSize < HEADER) {
                damage = fileSize == 0 ? null : "a header of " + fileSize + " bytes";
            } else if (in.readInt() != MAGIC) {
                throw new IOException(file + " is not a Falkon journal (bad magic)");
            } else {
                int version = in.readInt();
                if (version != VERSION) {
                    throw new IOException(file + " has journal version " + version + "; this dispatcher reads "
                            + VERSION);
                }
                offset = HEADER;
                CRC32C crc = new CRC32C();
                byte[] body = new byte[1024];
                while (offset < fileSize) {
                    if (fileSize - offset < 8) {
                        damage = "a torn record header";
                        break;
                    }
                    int len = in.readInt();
                    int sum = in.readInt();
                    if (len <= 0 || len > MAX_RECORD || len > fileSize - offset - 8) {
                        damage = len > fileSize - offset - 8 && len > 0 && len <= MAX_RECORD
                                ? "a torn record (" + len + " bytes announced, " + (fileSize - offset - 8) + " present)"
                                : "a corrupt record length " + len;
                        break;
                    }
                    if (body.length < len) {
                        body = new byte[Math.max(len, body.length * 2)];
                    }
                    in.readFully(body, 0, len);
                    crc.reset();
                    crc.update(body, 0, len);
                    if ((int) crc.getValue() != sum) {
                        damage = "a record whose checksum does not match";
                        break;
                    }
                    try {
                        Records.apply(Unpooled.wrappedBuffer(body, 0, len), replay);
                    } catch (RuntimeException e) {
                        damage = "a record that does not decode (" + e.getMessage() + ")";
                        break;
                    }
                    replay.records++;
                    offset += 8 + len;
                }
            }
        } catch (EOFException e) {
            damage = "a torn record";
        }
        if (damage != null) {
            long keep = Math.max(offset, 0);
            log.warn("journal {}: found {} at offset {}; truncating {} bytes after the last intact record "
                    + "(a crash during a write)", file, damage, keep, fileSize - keep);
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.truncate(keep);
                ch.force(true);
            }
        }
        return replay;
    }

    /** Hands the replayed state to the scheduler (before its loop starts). */
    public void restoreInto(Recovery into) {
        replayed.restoreInto(into);
        log.info("journal {}: {} records replayed: {} instances, {} unfinished tasks re-queued, {} results "
                        + "awaiting acknowledgement", file, replayed.records, replayed.instances.size(),
                replayed.pendingTasks(), replayed.unackedResults());
    }

    public int restoredInstances() {
        return replayed.instances.size();
    }

    public int restoredTasks() {
        return replayed.pendingTasks();
    }

    public Path file() {
        return file;
    }

    public FsyncPolicy policy() {
        return policy;
    }

    /** Writes a fresh journal holding what {@code content} writes, atomically replacing the old one. */
    private void rewrite(Consumer<ByteBuf> content) throws IOException {
        ByteBuf buf = Unpooled.buffer(1 << 16);
        buf.writeInt(MAGIC);
        buf.writeInt(VERSION);
        content.accept(buf);
        Path tmp = dir.resolve(FILE + ".compacting");
        Files.deleteIfExists(tmp); // left by a crash, perhaps with another mode: made anew, owner-only
        try (FileChannel out = OwnerOnly.channel(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            writeFully(out, buf);
            out.force(true);
        } finally {
            buf.release();
        }
        if (channel != null) {
            channel.close();
        }
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true); // the rename itself
        } catch (IOException e) {
            // some file systems cannot sync a directory; the rename is still atomic
        }
        channel = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
        size = channel.size();
        compactedSize = size;
    }

    private static void writeFully(FileChannel ch, ByteBuf buf) throws IOException {
        ByteBuffer nio = buf.nioBuffer();
        while (nio.hasRemaining()) {
            ch.write(nio);
        }
    }

    // ---- the Journal interface: on the scheduler thread ------------------------------------

    @Override
    public void instanceCreated(InstanceRecord instance) {
        batch.instanceCreated(instance);
    }

    @Override
    public void accepted(long instanceId, long clientTaskId, long submittedMicros, byte[] spec) {
        batch.accepted(instanceId, clientTaskId, submittedMicros, spec);
    }

    @Override
    public void completed(long instanceId, Message.DeliveredResult result) {
        batch.completed(instanceId, result);
    }

    @Override
    public void acked(long instanceId, long upToSeq) {
        batch.acked(instanceId, upToSeq);
    }

    @Override
    public void produced(long instanceId, String[] objectIds, String name, boolean ok, long failedProducer) {
        batch.produced(instanceId, objectIds, name, ok, failedProducer);
    }

    @Override
    public void destroyed(long instanceId) {
        batch.destroyed(instanceId);
    }

    @Override
    public void commit(Runnable send) {
        if (!batch.buf.isReadable() && outstanding.get() == 0) {
            send.run(); // nothing to make durable and nothing ahead of it
            return;
        }
        ByteBuf data = batch.buf;
        batch.buf = Unpooled.buffer(Math.max(4096, data.readableBytes()));
        outstanding.incrementAndGet();
        commands.add(new Append(data, send));
    }

    @Override
    public boolean wantsCompaction() {
        return !compactionQueued && size > Math.max(MIN_COMPACT_BYTES, 4 * compactedSize);
    }

    @Override
    public void compact(Consumer<Journal> snapshot) {
        Recorder r = new Recorder(Unpooled.buffer(1 << 20));
        snapshot.accept(r);
        compactionQueued = true;
        outstanding.incrementAndGet();
        commands.add(new Compact(r.buf));
    }

    // ---- the writer thread -----------------------------------------------------------------

    private void writeLoop() {
        long lastSync = Clock.SYSTEM.tickMicros(); // real time: the writer waits on a real queue
        boolean unsynced = false;
        List<Command> group = new ArrayList<>();
        while (true) {
            Command first;
            try {
                first = commands.poll(BATCH_SYNC_MILLIS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (first == null) {
                if (unsynced && policy == FsyncPolicy.BATCH) {
                    unsynced = !force();
                    lastSync = Clock.SYSTEM.tickMicros();
                }
                continue;
            }
            group.clear();
            group.add(first);
            commands.drainTo(group);
            List<Runnable> sends = new ArrayList<>(group.size());
            boolean stop = false;
            for (Command c : group) {
                if (c instanceof Append a) {
                    if (a.data.isReadable()) {
                        writeUntilDone(a.data);
                        unsynced = true;
                    }
                    a.data.release();
                    sends.add(a.send);
                } else if (c instanceof Compact cmp) {
                    compactNow(cmp.snapshot);
                    unsynced = false;
                    outstanding.decrementAndGet();
                } else if (c instanceof Barrier b) {
                    sends.add(() -> b.done.complete(null));
                    outstanding.incrementAndGet(); // balanced by the decrement after the sends
                } else {
                    stop = true;
                }
            }
            if (unsynced && (policy == FsyncPolicy.ALWAYS
                    || policy == FsyncPolicy.BATCH && Clock.SYSTEM.tickMicros() - lastSync >= BATCH_SYNC_MILLIS * 1000)) {
                unsynced = !force();
                lastSync = Clock.SYSTEM.tickMicros();
            }
            for (Runnable s : sends) {
                try {
                    s.run();
                } catch (RuntimeException e) {
                    log.error("sending a batch's replies failed", e);
                }
                outstanding.decrementAndGet();
            }
            if (stop) {
                if (unsynced && policy != FsyncPolicy.NEVER) {
                    force();
                }
                return;
            }
        }
    }

    /** Appends; on an I/O error (a full disk) retries every second: replies wait rather than lie. */
    private void writeUntilDone(ByteBuf data) {
        for (int attempt = 0; ; attempt++) {
            try {
                int n = data.readableBytes();
                ByteBuffer nio = data.nioBuffer();
                while (nio.hasRemaining()) {
                    channel.write(nio);
                }
                size += n;
                return;
            } catch (IOException e) {
                if (attempt == 0) {
                    log.error("journal {}: write failed ({}); holding replies and retrying every second", file,
                            e.toString());
                }
                if (closed) {
                    return;
                }
                try {
                    TimeUnit.SECONDS.sleep(1); // waiting for disk space: there is no event to wait on
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private boolean force() {
        try {
            channel.force(false);
            return true;
        } catch (IOException e) {
            log.error("journal {}: fsync failed: {}", file, e.toString());
            return false;
        }
    }

    private void compactNow(ByteBuf snapshot) {
        long before = size;
        try {
            rewrite(buf -> buf.writeBytes(snapshot));
            log.info("journal {}: compacted from {} to {} bytes", file, before, size);
        } catch (IOException e) {
            log.error("journal {}: compaction failed, keeping the old file: {}", file, e.toString());
            try {
                if (channel == null || !channel.isOpen()) {
                    channel = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
                }
            } catch (IOException again) {
                throw new UncheckedIOException(again);
            }
        } finally {
            snapshot.release();
            compactionQueued = false;
        }
    }

    /**
     * Waits until every batch committed so far is written (and forced, per policy) and its replies
     * sent.
     */
    public void sync() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        commands.add(new Barrier(done));
        done.join();
    }

    /** Writes what is queued, forces it (unless the policy is NEVER), and releases the directory. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        commands.add(new Stop());
        try {
            writer.join(TimeUnit.SECONDS.toMillis(30));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        closed = true;
        try {
            channel.close();
            lock.release();
            lockChannel.close();
        } catch (IOException e) {
            log.warn("closing journal {}: {}", file, e.toString());
        }
    }

    /** Encodes records into a buffer (a batch, or a compaction snapshot). */
    private static final class Recorder implements Journal {
        ByteBuf buf;

        Recorder(ByteBuf buf) {
            this.buf = buf;
        }

        @Override
        public void instanceCreated(InstanceRecord instance) {
            Records.instance(buf, instance);
        }

        @Override
        public void accepted(long instanceId, long clientTaskId, long submittedMicros, byte[] spec) {
            Records.accepted(buf, instanceId, clientTaskId, submittedMicros, spec);
        }

        @Override
        public void completed(long instanceId, Message.DeliveredResult result) {
            Records.completed(buf, instanceId, result);
        }

        @Override
        public void acked(long instanceId, long upToSeq) {
            Records.acked(buf, instanceId, upToSeq);
        }

        @Override
        public void produced(long instanceId, String[] objectIds, String name, boolean ok, long failedProducer) {
            Records.produced(buf, instanceId, objectIds, name, ok, failedProducer);
        }

        @Override
        public void destroyed(long instanceId) {
            Records.destroyed(buf, instanceId);
        }

        @Override
        public void commit(Runnable send) {
            throw new UnsupportedOperationException("a snapshot is not committed batch by batch");
        }
    }
}
