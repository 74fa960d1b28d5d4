package io.falkon.datacache;

import io.falkon.datacache.eviction.EvictionPolicy;
import io.falkon.datacache.fetch.Fetcher;
import io.falkon.datacache.fetch.PeerFetcher;
import io.falkon.datacache.fetch.StoreFetcher;
import io.falkon.datacache.fetch.Unpacker;
import io.falkon.protocol.auth.Token;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * An executor's local object cache (data diffusion): a directory holding up to {@code capacity}
 * bytes of objects, each stored under the SHA-256 of its key.
 *
 * <ul>
 *   <li>{@link #lease} returns a pinned object: a local hit, or fetched once however many tasks ask
 *       for it at the same time (single flight) from a peer named in the hints, else from the
 *       shared store; a stale hint (the peer no longer has it) falls through to the next source.</li>
 *   <li>Size and checksum are verified; an object a task wants unpacked is unpacked once and cached
 *       in that form too.</li>
 *   <li>Room is made by evicting unpinned objects, chosen by the {@link EvictionPolicy}.</li>
 *   <li>Objects are write-once/read-many: an id always names the same bytes, so there is no
 *       coherence protocol. The cache starts empty: nothing is kept across executor restarts.</li>
 * </ul>
 * Thread-safe.
 */
public final class CacheStore implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(CacheStore.class);

    private final Path dir;
    private final Path tmp;
    private final long capacity;
    private final EvictionPolicy policy;
    private final StoreFetcher store;
    private final HttpClient http;
    private final Token token;
    private final CacheListener listener;
    private final Map<String, Entry> entries = new HashMap<>();
    private final Map<String, CompletableFuture<Void>> inflight = new HashMap<>();
    private final AtomicLong tmpSeq = new AtomicLong();
    private long used;
    private long evictions;

    private static final class Entry {
        final String key;
        final String id;
        final boolean packed;
        final Path path;
        final long size;
        int pins;

        Entry(String key, String id, boolean packed, Path path, long size) {
            this.key = key;
            this.id = id;
            this.packed = packed;
            this.path = path;
            this.size = size;
        }
    }

    /**
     * @param dir      the cache directory (emptied first)
     * @param capacity bytes it may hold
     * @param store    reads from the shared store
     * @param token    what peers' cache servers require
     * @param listener told about objects added and removed (stored form only)
     */
    public CacheStore(Path dir, long capacity, EvictionPolicy policy, StoreFetcher store, HttpClient http,
                      Token token, CacheListener listener) throws IOException {
        if (capacity <= 0) {
            throw new IllegalArgumentException("cache capacity must be positive");
        }
        this.dir = dir.resolve("objects");
        this.tmp = dir.resolve("incoming");
        this.capacity = capacity;
        this.policy = policy;
        this.store = store;
        this.http = http;
        this.token = token;
        this.listener = listener;
        deleteTree(this.dir);
        deleteTree(this.tmp);
        Files.createDirectories(this.dir);
        Files.createDirectories(this.tmp);
    }

    public long capacity() {
        return capacity;
    }

    public EvictionPolicy policy() {
        return policy;
    }

    public synchronized long used() {
        return used;
    }

    public synchronized long evictions() {
        return evictions;
    }

    /** The ids and sizes of every object held in stored form (for the dispatcher's full summary). */
    public synchronized Map<String, Long> contents() {
        Map<String, Long> out = new HashMap<>();
        for (Entry e : entries.values()) {
            if (e.packed) {
                out.put(e.id, e.size);
            }
        }
        return out;
    }

    public synchronized boolean contains(String key) {
        return entries.containsKey(key);
    }

    /**
     * The object, pinned until the lease is closed: from this cache, else fetched (from the peers
     * in {@code peerHints}, in order, else from the shared store).
     *
     * @param peerHints {@code host:port} of peers that the dispatcher believes hold the object
     * @throws FetchException if no source has it (or it fails verification, or cannot fit)
     */
    public Lease lease(ObjectRef ref, List<String> peerHints) throws FetchException {
        String key = ref.key();
        while (true) {
            CompletableFuture<Void> wait;
            boolean mine = false;
            synchronized (this) {
                Entry e = entries.get(key);
                if (e != null) {
                    e.pins++;
                    policy.accessed(key);
                    return new Pinned(e, Source.LOCAL, 0);
                }
                wait = inflight.get(key);
                if (wait == null) {
                    wait = new CompletableFuture<>();
                    inflight.put(key, wait);
                    mine = true;
                }
            }
            if (mine) {
                return fetchAndPin(ref, peerHints, wait);
            }
            try {
                wait.get(); // someone else fetches it: share their copy
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                throw new FetchException("interrupted waiting for " + ref.id(), ie);
            } catch (ExecutionException ee) {
                throw ee.getCause() instanceof FetchException fe ? fe
                        : new FetchException("fetching " + ref.id() + " failed: " + ee.getCause(), ee.getCause());
            }
        }
    }

    /** The fetching thread's part: get it here, verify, unpack, make room, insert pinned. */
    private Lease fetchAndPin(ObjectRef ref, List<String> peerHints, CompletableFuture<Void> done)
            throws FetchException {
        String key = ref.key();
        try {
            Pinned lease;
            if (ref.unpack() != ObjectRef.Unpack.NONE) {
                try (Lease packed = lease(ref.packed(), peerHints)) {
                    Path out = tmp.resolve("u" + tmpSeq.incrementAndGet());
                    long size;
                    try {
                        size = Unpacker.unpack(packed.path(), ref.unpack(), out);
                    } catch (IOException e) {
                        deleteTree(out);
                        throw new FetchException("cannot unpack " + ref.id() + " as " + ref.unpack() + ": "
                                + e.getMessage(), e);
                    }
                    lease = insert(key, ref.id(), false, out, size, packed.source(), packed.bytesMoved());
                }
            } else {
                lease = fetchPacked(ref, peerHints);
            }
            done.complete(null);
            return lease;
        } catch (FetchException | RuntimeException e) {
            done.completeExceptionally(e);
            throw e;
        } finally {
            synchronized (this) {
                inflight.remove(key);
            }
        }
    }

    private Pinned fetchPacked(ObjectRef ref, List<String> peerHints) throws FetchException {
        List<String> tried = new ArrayList<>();
        for (String peer : peerHints) {
            Path out = tmp.resolve("p" + tmpSeq.incrementAndGet());
            try {
                long n = Copy.verified(new PeerFetcher(http, peer, token), ref, out);
                return insert(ref.key(), ref.id(), true, out, n, Source.PEER, n);
            } catch (IOException e) {
                // a stale hint, a peer gone, a bad copy: fall through to the next source
                tried.add("peer " + peer + ": " + e.getMessage());
                deleteQuietly(out);
            }
        }
        Path out = tmp.resolve("s" + tmpSeq.incrementAndGet());
        try {
            long n = Copy.verified(store, ref, out);
            return insert(ref.key(), ref.id(), true, out, n, Source.STORE, n);
        } catch (IOException e) {
            deleteQuietly(out);
            tried.add(store.describe(ref) + ": " + e.getMessage());
            throw new FetchException("cannot fetch " + ref.id() + " (" + String.join("; ", tried) + ")", e);
        }
    }

    /** Makes room and moves {@code file} in; returns it pinned. */
    private Pinned insert(String key, String id, boolean packed, Path file, long size, Source source, long moved)
            throws FetchException {
        Path target = dir.resolve(hash(key));
        List<Entry> victims = new ArrayList<>();
        Entry e;
        synchronized (this) {
            if (size > capacity) {
                deleteQuietly(file);
                throw new FetchException(id + " (" + size + " bytes) is larger than the whole cache ("
                        + capacity + " bytes)");
            }
            if (used + size > capacity) {
                long evictable = 0;
                for (Entry x : entries.values()) {
                    evictable += x.pins == 0 ? x.size : 0;
                }
                if (used - evictable + size > capacity) {
                    // refuse before evicting anything: nothing is dropped for an insert that cannot happen
                    deleteQuietly(file);
                    throw new FetchException("no room for " + id + " (" + size + " bytes): the other "
                            + (used >> 20) + " MiB of the cache are in use by running tasks");
                }
            }
            while (used + size > capacity) {
                String v = policy.victim(k -> entries.get(k).pins == 0);
                if (v == null) {
                    throw new IllegalStateException(policy.name() + " found no victim among evictable objects");
                }
                Entry gone = entries.remove(v);
                policy.removed(v);
                used -= gone.size;
                evictions++;
                victims.add(gone);
            }
            // move victims aside while still holding the lock: a late delete must never hit a new
            // copy of the same key fetched again meanwhile (same hashed file name)
            for (int i = 0; i < victims.size(); i++) {
                Entry gone = victims.get(i);
                Path aside = tmp.resolve("d" + tmpSeq.incrementAndGet());
                try {
                    Files.move(gone.path, aside, StandardCopyOption.ATOMIC_MOVE);
                    victims.set(i, new Entry(gone.key, gone.id, gone.packed, aside, gone.size));
                } catch (IOException ex) {
                    log.debug("cannot move {} aside: {}", gone.path, ex.toString());
                }
            }
            try {
                Files.move(file, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException ex) {
                deleteQuietly(file);
                throw new FetchException("cannot store " + id + " in the cache: " + ex.getMessage(), ex);
            }
            target.toFile().setReadOnly(); // write-once: tasks read it through a link, never change it
            e = new Entry(key, id, packed, target, size);
            e.pins = 1;
            entries.put(key, e);
            policy.inserted(key);
            used += size;
        }
        for (Entry v : victims) {
            deleteTree(v.path);
            if (v.packed) {
                listener.removed(v.id);
            }
        }
        if (packed) {
            listener.added(id, size);
        }
        return new Pinned(e, source, moved);
    }

    /**
     * Adopts a task's output as the object {@code id} (moved into the cache, so the task's copy is
     * gone), making it available to later tasks here and, through the index, on other executors.
     */
    public void register(String id, Path file) throws FetchException {
        Path staged = tmp.resolve("o" + tmpSeq.incrementAndGet());
        long size;
        try {
            size = Files.size(file);
            Files.move(file, staged, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new FetchException("cannot register output " + file + " as " + id + ": " + e.getMessage(), e);
        }
        synchronized (this) {
            if (entries.containsKey(id)) {
                deleteQuietly(staged); // write-once: the id already names these bytes
                return;
            }
        }
        insert(id, id, true, staged, size, Source.LOCAL, 0).close();
    }

    /** Opens a cached object (stored form) for a peer, pinned until the returned lease is closed; null if absent. */
    public Lease peek(String id) {
        synchronized (this) {
            Entry e = entries.get(id);
            if (e == null || !e.packed) {
                return null;
            }
            e.pins++;
            return new Pinned(e, Source.LOCAL, 0);
        }
    }

    private final class Pinned implements Lease {
        private final Entry entry;
        private final Source source;
        private final long moved;
        private boolean closed;

        Pinned(Entry entry, Source source, long moved) {
            this.entry = entry;
            this.source = source;
            this.moved = moved;
        }

        @Override
        public Path path() {
            return entry.path;
        }

        @Override
        public Source source() {
            return source;
        }

        @Override
        public long bytesMoved() {
            return moved;
        }

        @Override
        public long size() {
            return entry.size;
        }

        @Override
        public void close() {
            synchronized (CacheStore.this) {
                if (!closed) {
                    closed = true;
                    entry.pins--;
                }
            }
        }
    }

    static String hash(String key) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(key.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            log.debug("cannot delete {}: {}", p, e.toString());
        }
    }

    static void deleteTree(Path p) {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> files = Files.walk(p)) {
            files.sorted(Comparator.reverseOrder()).forEach(CacheStore::deleteQuietly);
        } catch (IOException e) {
            log.debug("cannot delete {}: {}", p, e.toString());
        }
    }

    /** Removes every object. */
    @Override
    public synchronized void close() {
        entries.clear();
        deleteTree(dir);
        deleteTree(tmp);
    }
}
