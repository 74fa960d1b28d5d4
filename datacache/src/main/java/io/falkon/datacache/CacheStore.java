package io.falkon.datacache;

import io.falkon.datacache.eviction.EvictionPolicy;
import io.falkon.datacache.fetch.Fetcher;
import io.falkon.datacache.fetch.ObjectRef;
import io.falkon.datacache.fetch.PeerFetcher;
import io.falkon.datacache.fetch.Stamp;
import io.falkon.datacache.fetch.StoreFetcher;
import io.falkon.datacache.fetch.Unpacker;
import io.falkon.protocol.LogSafe;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.fs.OwnerOnly;

import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
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
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * An executor's local object cache (data diffusion): a directory holding up to {@code capacity}
 * bytes of objects, each stored under the SHA-256 of its key. The consistency model is in
 * docs/data-diffusion.md; in short:
 *
 * <ul>
 *   <li>{@link #lease} returns an object: a local hit, or fetched once however many tasks ask for it
 *       at the same time (single flight) from a peer named in the hints, else from the shared store;
 *       a stale hint falls through to the next source.</li>
 *   <li>Every copy that arrives is hashed (SHA-256); the hash, the size and the store file's stamp
 *       are recorded with it. A peer's copy must match what the peer recorded, and any copy what
 *       the task declared (size, checksum).</li>
 *   <li>A hit is checked before use: against the size and checksum the task declares, and with
 *       {@link Revalidate#STAT} against the store file's stamp. A stale copy is dropped and fetched
 *       again (counted in {@link Lease#refetched()}).</li>
 *   <li>Tasks get their own copy ({@link Lease#copyTo}): the cache's copy, which other tasks and
 *       peers read, never reaches a task.</li>
 *   <li>An object that cannot be cached (larger than the cache, or no room because everything is
 *       in use) is read through: the task gets it, the cache does not keep it.</li>
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
    private final Revalidate revalidate;
    private final CacheListener listener;
    private final Map<String, Entry> entries = new HashMap<>();
    private final Map<String, CompletableFuture<Void>> inflight = new HashMap<>();
    private final AtomicLong tmpSeq = new AtomicLong();
    /** Temporary outputs held for the tasks that read them ({@link #hold}): pinned until released. */
    private final Map<String, Lease> held = new HashMap<>();
    private long used;
    private long evictions;
    private long refetches;

    /** What the cache knows of one object it holds. */
    private static final class Entry {
        final String key;
        final String id;
        final boolean packed;
        /** Where it is; moved aside (under the lock) when it leaves the cache while still in use. */
        Path path;
        final long size;
        /** The stored form's size and SHA-256 (for an unpacked form: of the archive it came from). */
        final long packedSize;
        final String sha256;
        /** The store file's size and mtime when copied, or null (a peer's copy, HTTP, an output). */
        final Stamp stamp;
        /** Declared checksums ({@code sha256:…}, {@code md5:…}) known to match. */
        final Set<String> verified = new HashSet<>();
        int pins;
        /** Dropped from the cache (stale, evicted) while pinned: deleted when the last pin goes. */
        boolean retired;

        Entry(String key, String id, boolean packed, Path path, long size, long packedSize, String sha256,
              Stamp stamp) {
            this.key = key;
            this.id = id;
            this.packed = packed;
            this.path = path;
            this.size = size;
            this.packedSize = packedSize;
            this.sha256 = sha256;
            this.stamp = stamp;
            verified.add("sha256:" + sha256);
        }
    }

    /**
     * @param dir        the cache directory (emptied first)
     * @param capacity   bytes it may hold
     * @param store      reads from the shared store
     * @param token      what peers' cache servers require
     * @param revalidate when a hit is checked against the store
     * @param listener   told about objects added and removed (stored form only)
     */
    public CacheStore(Path dir, long capacity, EvictionPolicy policy, StoreFetcher store, HttpClient http,
                      Token token, Revalidate revalidate, CacheListener listener) throws IOException {
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
        this.revalidate = revalidate;
        this.listener = listener;
        deleteTree(this.dir);
        deleteTree(this.tmp);
        OwnerOnly.directories(this.dir); // task data: owner-only (docs/security.md)
        OwnerOnly.directories(this.tmp);
    }

    public long capacity() {
        return capacity;
    }

    public EvictionPolicy policy() {
        return policy;
    }

    public Revalidate revalidate() {
        return revalidate;
    }

    public synchronized long used() {
        return used;
    }

    public synchronized long evictions() {
        return evictions;
    }

    /** Cached copies found stale and fetched again so far. */
    public synchronized long refetches() {
        return refetches;
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
     * The object, for one task: from this cache (checked fresh), else fetched (from the peers in
     * {@code peerHints}, in order, else from the shared store). Close the lease once the task has
     * its copy.
     *
     * @param peerHints {@code host:port} of peers that the dispatcher believes hold the object
     * @throws FetchException if no source has it as the task describes it
     */
    public Lease lease(ObjectRef ref, List<String> peerHints) throws FetchException {
        String key = ref.key();
        boolean refetched = false;
        while (true) {
            CompletableFuture<Void> wait;
            Entry hit = null;
            boolean mine = false;
            synchronized (this) {
                Entry e = entries.get(key);
                if (e != null) {
                    e.pins++;
                    policy.accessed(key);
                    hit = e;
                    wait = null;
                } else {
                    wait = inflight.get(key);
                    if (wait == null) {
                        wait = new CompletableFuture<>();
                        inflight.put(key, wait);
                        mine = true;
                    }
                }
            }
            if (hit != null) {
                String stale = staleness(hit, ref);
                if (stale == null) {
                    return new Pinned(hit, Source.LOCAL, 0, refetched);
                }
                retire(hit, stale);
                refetched = true;
                continue;
            }
            if (mine) {
                return fetchAndPin(ref, peerHints, wait, refetched);
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

    /**
     * Seed 004's collective gather: brings the objects of {@code refs} (each in its stored form)
     * that this cache does not hold and no one here is fetching from {@code peer} in one request,
     * instead of one each. Every object that arrives is verified as a single fetch is (the size and
     * checksum declared, the peer's record of it) and inserted; what the peer does not send, or sends
     * wrong, is left out, for the task's own {@link #lease} to fetch from elsewhere. Returns the
     * arrivals by key, pinned (their source {@link Source#PEER}): the caller uses or closes each.
     */
    public Map<String, Lease> gather(String peer, List<ObjectRef> refs) {
        List<ObjectRef> mine = new ArrayList<>();
        List<CompletableFuture<Void>> claims = new ArrayList<>();
        synchronized (this) {
            for (ObjectRef ref : refs) {
                String key = ref.key();
                if (ref.unpack() != ObjectRef.Unpack.NONE || entries.containsKey(key) || inflight.containsKey(key)) {
                    continue;
                }
                CompletableFuture<Void> f = new CompletableFuture<>();
                inflight.put(key, f);
                claims.add(f);
                mine.add(ref);
            }
        }
        Map<String, Lease> arrived = new HashMap<>();
        if (mine.isEmpty()) {
            return arrived;
        }
        List<String> ids = new ArrayList<>(mine.size());
        mine.forEach(r -> ids.add(r.id()));
        try (TarArchiveInputStream tar = new TarArchiveInputStream(new PeerFetcher(http, peer, token).batch(ids))) {
            TarArchiveEntry e;
            while ((e = tar.getNextEntry()) != null) {
                String name = e.getName();
                int dot = name.indexOf('.');
                int i = dot > 0 ? parseIndex(name.substring(0, dot)) : -1;
                if (i < 0 || i >= mine.size() || arrived.containsKey(mine.get(i).key())) {
                    log.warn("peer {} sent an entry {} that answers nothing asked: ignored", peer, LogSafe.text(name));
                    continue;
                }
                ObjectRef ref = mine.get(i);
                if (ref.size() >= 0 && e.getSize() != ref.size()) {
                    log.warn("peer {} sent {} bytes of {}, declared {}: refused", peer, e.getSize(), ref.id(), ref.size());
                    continue; // its bytes are skipped by the next entry's read
                }
                String recorded = name.substring(dot + 1);
                Path out = tmp.resolve("g" + tmpSeq.incrementAndGet());
                try {
                    InputStream entry = new java.io.FilterInputStream(tar) {
                        @Override
                        public void close() {
                            // the archive goes on: only this entry ends here
                        }
                    };
                    Copy.Copied c = Copy.verified(new Fetcher() {
                        @Override
                        public Opened open(ObjectRef r) {
                            return new Opened(entry, recorded, null);
                        }

                        @Override
                        public String describe(ObjectRef r) {
                            return "peer " + peer;
                        }
                    }, ref, out);
                    arrived.put(ref.key(), insert(ref.key(), ref.id(), true, new Arrival(out, c.size(), c.size(),
                            c.sha256(), null, Source.PEER, c.size(), false), ref.checksum()));
                } catch (IOException | FetchException ex) {
                    deleteQuietly(out);
                    log.warn("refused {} from peer {}'s batch: {}", ref.id(), peer, ex.getMessage());
                }
            }
        } catch (IOException ex) {
            log.debug("batch of {} objects from peer {}: {}", ids.size(), peer, ex.toString()); // each task fetches its own
        } finally {
            synchronized (this) {
                for (ObjectRef ref : mine) {
                    inflight.remove(ref.key());
                }
            }
            claims.forEach(f -> f.complete(null)); // waiters look again: a hit, or a fetch of their own
        }
        log.debug("gathered {} of {} objects from peer {} in one request", arrived.size(), mine.size(), peer);
        return arrived;
    }

    private static int parseIndex(String s) {
        try {
            return s.length() > 9 ? -1 : Integer.parseInt(s);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * Why a cached copy may not serve {@code ref}, or null if it may: it must match the size and
     * checksum the task declares, and (with {@link Revalidate#STAT}) the store file as it is now.
     */
    private String staleness(Entry e, ObjectRef ref) {
        if (ref.size() >= 0 && ref.size() != e.packedSize) {
            return "the cached copy has " + e.packedSize + " bytes, the task declares " + ref.size();
        }
        String declared = ref.checksum().toLowerCase();
        if (!declared.isEmpty() && !matches(e, declared)) {
            return "the cached copy does not match the declared " + declared.substring(0, declared.indexOf(':'));
        }
        if (revalidate == Revalidate.STAT && e.stamp != null) {
            try {
                Stamp now = store.stamp(ref);
                if (now != null && !now.equals(e.stamp)) {
                    return "the store file changed (" + e.stamp.size() + " bytes, mtime " + e.stamp.mtimeMillis()
                            + " when copied; now " + now.size() + " bytes, mtime " + now.mtimeMillis() + ")";
                }
            } catch (IOException ex) {
                log.debug("cannot revalidate {}: {}", ref.id(), ex.toString()); // keep the copy
            }
        }
        return null;
    }

    /** Whether the entry matches a declared checksum; computes (once) what was not known. */
    private boolean matches(Entry e, String declared) {
        synchronized (this) {
            if (e.verified.contains(declared)) {
                return true;
            }
        }
        if (!e.packed || !declared.startsWith("md5:")) {
            return false; // a sha256 is known, and differs; an unpacked form is re-derived
        }
        try {
            boolean ok = declared.equals("md5:" + Copy.hex(e.path, "MD5"));
            if (ok) {
                synchronized (this) {
                    e.verified.add(declared);
                }
            }
            return ok;
        } catch (IOException ex) {
            return false;
        }
    }

    /** Drops a stale copy (deleted once no lease holds it) and unpins the caller's hold on it. */
    private void retire(Entry e, String why) {
        boolean mine;
        synchronized (this) {
            e.pins--;
            mine = entries.get(e.key) == e;
            if (mine) {
                drop(e);
                refetches++;
            }
        }
        if (mine) {
            log.info("cached copy of {} is stale, fetching it again: {}", e.id, why);
            if (e.packed) {
                listener.removed(e.id);
            }
        }
        deleteIfUnused(e);
    }

    /**
     * Removes an entry from the cache (lock held): off the books, and its file moved aside at once,
     * so that a new copy of the same key can take its name; the file is deleted when no lease holds
     * it ({@link #deleteIfUnused}, outside the lock).
     */
    private void drop(Entry e) {
        entries.remove(e.key);
        policy.removed(e.key);
        used -= e.size;
        e.retired = true;
        Path aside = tmp.resolve("d" + tmpSeq.incrementAndGet());
        try {
            Files.move(e.path, aside, StandardCopyOption.ATOMIC_MOVE);
            e.path = aside;
        } catch (IOException ex) {
            log.debug("cannot move {} aside: {}", e.path, ex.toString());
        }
    }

    private void deleteIfUnused(Entry e) {
        boolean delete;
        synchronized (this) {
            delete = e.retired && e.pins == 0;
        }
        if (delete) {
            deleteTree(e.path);
        }
    }

    /** The fetching thread's part: get it here, verify, unpack, make room, insert pinned. */
    private Lease fetchAndPin(ObjectRef ref, List<String> peerHints, CompletableFuture<Void> done, boolean refetched)
            throws FetchException {
        String key = ref.key();
        try {
            Lease lease;
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
                    Arrival a = new Arrival(out, size, packed.size(), packed.sha256(), stampOf(packed),
                            packed.source(), packed.bytesMoved(), refetched || packed.refetched());
                    lease = insert(key, ref.id(), false, a, ref.checksum());
                }
            } else {
                lease = fetchPacked(ref, peerHints, refetched);
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

    private Stamp stampOf(Lease packed) {
        return packed instanceof Pinned p ? p.entry.stamp : packed instanceof ReadThrough r ? r.stamp : null;
    }

    /** A copy that has just arrived in {@code tmp}, with what is known of it. */
    private record Arrival(Path file, long size, long packedSize, String sha256, Stamp stamp, Source source,
                           long moved, boolean refetched) {
    }

    private Lease fetchPacked(ObjectRef ref, List<String> peerHints, boolean refetched) throws FetchException {
        List<String> tried = new ArrayList<>();
        for (String peer : peerHints) {
            Path out = tmp.resolve("p" + tmpSeq.incrementAndGet());
            try {
                Copy.Copied c = Copy.verified(new PeerFetcher(http, peer, token), ref, out);
                return insert(ref.key(), ref.id(), true, new Arrival(out, c.size(), c.size(), c.sha256(), null,
                        Source.PEER, c.size(), refetched), ref.checksum());
            } catch (IOException e) {
                // a stale hint, a peer gone, a bad copy: fall through to the next source
                tried.add("peer " + peer + ": " + e.getMessage());
                deleteQuietly(out);
                if (e.getMessage() != null && e.getMessage().contains("its own record")) {
                    log.warn("refused a copy of {}: {}", ref.id(), e.getMessage()); // changed where it was cached
                }
            }
        }
        Path out = tmp.resolve("s" + tmpSeq.incrementAndGet());
        try {
            Copy.Copied c = Copy.verified(store, ref, out);
            return insert(ref.key(), ref.id(), true, new Arrival(out, c.size(), c.size(), c.sha256(), c.stamp(),
                    Source.STORE, c.size(), refetched), ref.checksum());
        } catch (IOException e) {
            deleteQuietly(out);
            tried.add(store.describe(ref) + ": " + e.getMessage());
            throw new FetchException("cannot fetch " + ref.id() + " (" + String.join("; ", tried) + ")", e);
        }
    }

    /**
     * Makes room and moves the arrival in; returns it pinned. When it cannot be cached (larger than
     * the cache, or no room because the rest is in use), returns it read through instead.
     */
    private Lease insert(String key, String id, boolean packed, Arrival a, String declared) throws FetchException {
        Path target = dir.resolve(hash(key));
        List<Entry> victims = new ArrayList<>();
        Entry e = null;
        synchronized (this) {
            Entry present = entries.get(key);
            if (present != null) {
                // an output registered meanwhile, or a copy fetched while this one travelled: keep one
                drop(present);
                victims.add(present);
            }
            if (a.size() <= capacity && roomFor(a.size())) {
                while (used + a.size() > capacity) {
                    String v = policy.victim(k -> entries.get(k).pins == 0);
                    if (v == null) {
                        throw new IllegalStateException(policy.name() + " found no victim among evictable objects");
                    }
                    Entry gone = entries.get(v);
                    drop(gone);
                    evictions++;
                    victims.add(gone);
                }
                try {
                    Files.move(a.file(), target, StandardCopyOption.REPLACE_EXISTING,
                            StandardCopyOption.ATOMIC_MOVE);
                } catch (IOException ex) {
                    deleteTree(a.file());
                    throw new FetchException("cannot store " + id + " in the cache: " + ex.getMessage(), ex);
                }
                target.toFile().setReadOnly();
                e = new Entry(key, id, packed, target, a.size(), a.packedSize(), a.sha256(), a.stamp());
                if (!declared.isEmpty()) {
                    e.verified.add(declared.toLowerCase()); // it was checked on arrival
                }
                e.pins = 1;
                entries.put(key, e);
                policy.inserted(key);
                used += a.size();
            }
        }
        for (Entry v : victims) {
            deleteIfUnused(v);
            if (v.packed) {
                listener.removed(v.id);
            }
        }
        if (e == null) {
            log.debug("{} ({} bytes) read through: {}", id, a.size(), a.size() > capacity
                    ? "larger than the cache" : "the rest of the cache is in use");
            return new ReadThrough(a);
        }
        if (packed) {
            listener.added(id, a.size());
        }
        return new Pinned(e, a.source(), a.moved(), a.refetched());
    }

    /** Whether {@code size} bytes fit once every unpinned object is evicted (lock held). */
    private boolean roomFor(long size) {
        if (used + size <= capacity) {
            return true;
        }
        long pinned = 0;
        for (Entry x : entries.values()) {
            pinned += x.pins > 0 ? x.size : 0;
        }
        return pinned + size <= capacity;
    }

    /**
     * Adopts a task's output (already saved to persistent storage) as the object {@code id}, taken
     * into the cache (moved when {@code file} may be, else copied: {@link OutputFile}) so that later
     * tasks here and, through the index, on other executors read it from here. An output that cannot
     * be cached (too large, no room) is dropped: its saved copy is the one that counts.
     */
    public void register(String id, OutputFile file) throws FetchException {
        adopt(id, file).close();
    }

    /** Takes a task's output in (moved or copied), hashes it and inserts it as the object {@code id}: pinned, or read through. */
    private Lease adopt(String id, OutputFile file) throws FetchException {
        Path staged = tmp.resolve("o" + tmpSeq.incrementAndGet());
        long size;
        String sha;
        try {
            file.takeTo(staged);
            size = Files.size(staged);
            sha = Copy.sha256(staged);
        } catch (IOException e) {
            try {
                file.putBack(staged);
            } catch (IOException again) {
                log.warn("cannot put output {} back at {}: {}", id, file.path(), again.toString());
            }
            throw new FetchException("cannot adopt output " + file.path() + " as " + id + ": " + e.getMessage(), e);
        }
        return insert(id, id, true, new Arrival(staged, size, size, sha, null, Source.LOCAL, 0, false), "");
    }

    /**
     * Adopts a task's temporary output as the object {@code id} and holds it: pinned (never evicted)
     * until {@link #release}, served to peers, written nowhere else (seed 004's intermediate data on
     * the nodes). Returns false, with the file left where it was, when it cannot be held: larger than
     * the cache, or no room beside what is pinned; the caller then writes it through instead.
     */
    public boolean hold(String id, OutputFile file) throws FetchException {
        Lease lease = adopt(id, file);
        if (!lease.cached()) {
            try {
                file.putBack(lease.path()); // a moved file back where the task left it, for the store
            } catch (IOException e) {
                throw new FetchException("cannot put output " + id + " back at " + file.path() + ": " + e.getMessage(), e);
            } finally {
                lease.close();
            }
            return false;
        }
        Lease before;
        synchronized (this) {
            before = held.put(id, lease);
        }
        if (before != null) {
            before.close(); // a copy held before (the producer ran again here): the new one replaces it
        }
        return true;
    }

    /** Lets held objects go: evictable from now on like any other (ids not held are ignored). */
    public void release(List<String> ids) {
        List<Lease> gone = new ArrayList<>(ids.size());
        synchronized (this) {
            for (String id : ids) {
                Lease l = held.remove(id);
                if (l != null) {
                    gone.add(l);
                }
            }
        }
        gone.forEach(Lease::close);
    }

    /** Lets every held object go (a new dispatcher session: none of them is known to be needed). */
    public void releaseAll() {
        List<String> ids;
        synchronized (this) {
            ids = new ArrayList<>(held.keySet());
        }
        release(ids);
    }

    /** How many objects are held. */
    public synchronized int held() {
        return held.size();
    }

    /**
     * Opens a cached object (stored form) for a peer, pinned until the returned lease is closed;
     * null if absent. The lease's {@link Lease#sha256()} is what the receiving peer checks against.
     */
    public Lease peek(String id) {
        synchronized (this) {
            Entry e = entries.get(id);
            if (e == null || !e.packed) {
                return null;
            }
            e.pins++;
            return new Pinned(e, Source.LOCAL, 0, false);
        }
    }

    /** A cached object, pinned. */
    private final class Pinned implements Lease {
        private final Entry entry;
        private final Source source;
        private final long moved;
        private final boolean refetched;
        private boolean closed;

        Pinned(Entry entry, Source source, long moved, boolean refetched) {
            this.entry = entry;
            this.source = source;
            this.moved = moved;
            this.refetched = refetched;
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
        public String sha256() {
            return entry.packed ? entry.sha256 : null;
        }

        @Override
        public boolean cached() {
            return true;
        }

        @Override
        public boolean refetched() {
            return refetched;
        }

        @Override
        public void copyTo(Path target) throws IOException {
            Clone.copy(entry.path, target);
        }

        @Override
        public void close() {
            synchronized (CacheStore.this) {
                if (closed) {
                    return;
                }
                closed = true;
                entry.pins--;
            }
            deleteIfUnused(entry);
        }
    }

    /** An object the cache could not keep: the task gets this copy, and it is gone on close. */
    private static final class ReadThrough implements Lease {
        private final Arrival a;
        private final Stamp stamp;
        private boolean taken;

        ReadThrough(Arrival a) {
            this.a = a;
            this.stamp = a.stamp();
        }

        @Override
        public Path path() {
            return a.file();
        }

        @Override
        public Source source() {
            return a.source();
        }

        @Override
        public long bytesMoved() {
            return a.moved();
        }

        @Override
        public long size() {
            return a.size();
        }

        @Override
        public String sha256() {
            return a.sha256();
        }

        @Override
        public boolean cached() {
            return false;
        }

        @Override
        public boolean refetched() {
            return a.refetched();
        }

        @Override
        public synchronized void copyTo(Path target) throws IOException {
            if (taken) {
                throw new IllegalStateException(a.file() + " was already given to a task");
            }
            try {
                Files.move(a.file(), target, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                Clone.copy(a.file(), target); // another file system
                deleteTree(a.file());
            }
            taken = true;
        }

        @Override
        public synchronized void close() {
            if (!taken) {
                deleteTree(a.file());
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
            files.sorted(Comparator.reverseOrder()).forEach(f -> {
                f.toFile().setWritable(true);
                deleteQuietly(f);
            });
        } catch (IOException e) {
            log.debug("cannot delete {}: {}", p, e.toString());
        }
    }

    /** Removes every object. */
    @Override
    public synchronized void close() {
        held.clear();
        entries.clear();
        deleteTree(dir);
        deleteTree(tmp);
    }
}
