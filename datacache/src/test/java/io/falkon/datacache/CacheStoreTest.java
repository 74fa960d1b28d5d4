package io.falkon.datacache;

import io.falkon.datacache.eviction.Lru;
import io.falkon.datacache.fetch.StoreFetcher;
import io.falkon.datacache.peer.PeerServer;
import io.falkon.protocol.auth.Token;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.compressors.gzip.GzipCompressorOutputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import io.falkon.datacache.fetch.PeerFetcher;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

class CacheStoreTest {
    @TempDir
    Path store;
    @TempDir
    Path cacheDir;
    @TempDir
    Path otherDir;

    final HttpClient http = HttpClient.newHttpClient();
    final Token token = Token.random();
    final List<String> events = new CopyOnWriteArrayList<>();
    final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : closing) {
            c.close();
        }
    }

    CacheStore cache(Path dir, long capacity) throws IOException {
        CacheStore c = new CacheStore(dir, capacity, new Lru(), new StoreFetcher(store, http, null), http, token,
                new CacheListener() {
                    @Override
                    public void added(String id, long size) {
                        events.add("+" + id);
                    }

                    @Override
                    public void removed(String id) {
                        events.add("-" + id);
                    }
                });
        closing.add(c);
        return c;
    }

    Path object(String name, int size) throws IOException {
        byte[] b = new byte[size];
        for (int i = 0; i < size; i++) {
            b[i] = (byte) (name.hashCode() + i);
        }
        return Files.write(store.resolve(name), b);
    }

    @Test
    void aMissIsReadFromTheStoreOnceAndThenHitsLocally() throws Exception {
        Path src = object("a.dat", 1000);
        CacheStore c = cache(cacheDir, 10_000);
        ObjectRef ref = new ObjectRef("a", "a.dat", 1000, "", ObjectRef.Unpack.NONE);
        try (Lease first = c.lease(ref, List.of())) {
            assertThat(first.source()).isEqualTo(Source.STORE);
            assertThat(first.bytesMoved()).isEqualTo(1000);
            assertThat(Files.readAllBytes(first.path())).isEqualTo(Files.readAllBytes(src));
        }
        try (Lease second = c.lease(ref, List.of())) {
            assertThat(second.source()).isEqualTo(Source.LOCAL);
            assertThat(second.bytesMoved()).isZero();
        }
        assertThat(events).containsExactly("+a");
        assertThat(c.used()).isEqualTo(1000);
        assertThat(c.contents()).containsEntry("a", 1000L);
    }

    @Test
    void concurrentRequestsForAMissingObjectFetchItOnce() throws Exception {
        object("big.dat", 2_000_000);
        CacheStore c = cache(cacheDir, 10_000_000);
        ObjectRef ref = new ObjectRef("big", "big.dat", 2_000_000, "", ObjectRef.Unpack.NONE);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Source>> got = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            got.add(pool.submit(() -> {
                go.await();
                try (Lease l = c.lease(ref, List.of())) {
                    return l.source();
                }
            }));
        }
        go.countDown();
        int fromStore = 0;
        for (Future<Source> f : got) {
            if (f.get(30, TimeUnit.SECONDS) == Source.STORE) {
                fromStore++;
            }
        }
        pool.shutdown();
        assertThat(fromStore).isEqualTo(1);
        assertThat(events).containsExactly("+big");
    }

    @Test
    void roomIsMadeByEvictingTheLeastRecentlyUsedButNeverAPinnedObject() throws Exception {
        for (String n : List.of("a", "b", "c")) {
            object(n, 400);
        }
        CacheStore c = cache(cacheDir, 1000);
        Lease a = c.lease(ObjectRef.of("a", "a"), List.of());
        c.lease(ObjectRef.of("b", "b"), List.of()).close();
        try (Lease l = c.lease(ObjectRef.of("c", "c"), List.of())) {
            assertThat(l.source()).isEqualTo(Source.STORE);
        }
        // a is pinned and older, b is not: b went
        assertThat(events).containsExactly("+a", "+b", "-b", "+c");
        assertThat(c.contains("a")).isTrue();
        assertThat(Files.exists(a.path())).isTrue();
        object("d", 700);
        assertThatThrownBy(() -> c.lease(ObjectRef.of("d", "d"), List.of())).isInstanceOf(FetchException.class)
                .hasMessageContaining("no room for d");
        a.close();
        object("huge", 5000);
        assertThatThrownBy(() -> c.lease(ObjectRef.of("huge", "huge"), List.of()))
                .hasMessageContaining("larger than the whole cache");
    }

    @Test
    void sizeAndChecksumAreVerifiedAndABadCopyIsNotKept() throws Exception {
        Path src = object("x", 100);
        String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(src)));
        CacheStore c = cache(cacheDir, 10_000);
        assertThatThrownBy(() -> c.lease(new ObjectRef("x", "x", 99, "", ObjectRef.Unpack.NONE), List.of()))
                .hasMessageContaining("got 100 bytes").hasMessageContaining("expected 99");
        assertThatThrownBy(() -> c.lease(new ObjectRef("x", "x", -1, "sha256:" + "0".repeat(64),
                ObjectRef.Unpack.NONE), List.of())).hasMessageContaining("checksum mismatch");
        assertThat(c.contains("x")).isFalse();
        try (Lease ok = c.lease(new ObjectRef("x", "x", 100, "sha256:" + sha, ObjectRef.Unpack.NONE), List.of())) {
            assertThat(ok.source()).isEqualTo(Source.STORE);
        }
        assertThatThrownBy(() -> c.lease(ObjectRef.of("nope", "no/such/file"), List.of()))
                .hasMessageContaining("cannot fetch nope").hasMessageContaining("does not exist in the shared store");
        assertThatThrownBy(() -> c.lease(ObjectRef.of("escape", "../../etc/passwd"), List.of()))
                .hasMessageContaining("leaves the shared store root");
    }

    @Test
    void peersServeTheirCopiesAndAStaleOrDeadPeerFallsBackToTheStore() throws Exception {
        object("shared", 5000);
        CacheStore holder = cache(otherDir, 100_000);
        holder.lease(ObjectRef.of("shared", "shared"), List.of()).close();
        PeerServer server = PeerServer.start(holder, "127.0.0.1", 0, token);
        closing.add(server);
        String peer = "127.0.0.1:" + server.port();
        CacheStore c = cache(cacheDir, 100_000);
        int dead;
        try (ServerSocket s = new ServerSocket(0)) {
            dead = s.getLocalPort();
        }
        try (Lease l = c.lease(ObjectRef.of("shared", "shared"), List.of("127.0.0.1:" + dead, peer))) {
            assertThat(l.source()).isEqualTo(Source.PEER);
            assertThat(Files.readAllBytes(l.path())).isEqualTo(Files.readAllBytes(store.resolve("shared")));
        }
        object("only-in-store", 300);
        CacheStore third = cache(store.resolve("third-cache"), 100_000);
        try (Lease l = third.lease(ObjectRef.of("only-in-store", "only-in-store"), List.of(peer))) {
            assertThat(l.source()).as("the hint was stale: the peer answered 404").isEqualTo(Source.STORE);
        }
    }

    @Test
    void aPeerServerRefusesAFetchWithoutTheTokenOrWithAWrongOne() throws Exception {
        object("secret-data", 5000);
        CacheStore holder = cache(otherDir, 100_000);
        holder.lease(ObjectRef.of("secret-data", "secret-data"), List.of()).close();
        PeerServer server = PeerServer.start(holder, "127.0.0.1", 0, token);
        closing.add(server);
        URI uri = PeerFetcher.uri("127.0.0.1:" + server.port(), "secret-data");
        HttpResponse<byte[]> none = http.send(HttpRequest.newBuilder(uri).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(none.statusCode()).isEqualTo(401);
        assertThat(none.headers().firstValue("WWW-Authenticate")).hasValue("Bearer realm=\"falkon\"");
        HttpResponse<byte[]> wrong = http.send(HttpRequest.newBuilder(uri)
                .header("Authorization", "Bearer not-the-token").build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(wrong.statusCode()).isEqualTo(401);
        assertThat(new String(wrong.body(), StandardCharsets.UTF_8)).doesNotContain("secret");
        HttpResponse<byte[]> right = http.send(HttpRequest.newBuilder(uri)
                .header("Authorization", "Bearer " + token.value()).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(right.statusCode()).isEqualTo(200);
        assertThat(right.body()).isEqualTo(Files.readAllBytes(store.resolve("secret-data")));
        // and a cache that does not hold the token falls back to the store: the peer refused it
        CacheStore stranger = new CacheStore(cacheDir, 100_000, new Lru(), new StoreFetcher(store, http, null), http,
                Token.of("another-deployment"), new CacheListener() {
                    @Override
                    public void added(String id, long size) {
                    }

                    @Override
                    public void removed(String id) {
                    }
                });
        closing.add(stranger);
        try (Lease l = stranger.lease(ObjectRef.of("secret-data", "secret-data"),
                List.of("127.0.0.1:" + server.port()))) {
            assertThat(l.source()).isEqualTo(Source.STORE);
        }
    }

    @Test
    void aGzipObjectIsUnpackedOnceAndATarArchiveBecomesADirectory() throws Exception {
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (OutputStream o = new GzipCompressorOutputStream(gz)) {
            o.write("hello data\n".repeat(100).getBytes(StandardCharsets.UTF_8));
        }
        Files.write(store.resolve("text.gz"), gz.toByteArray());
        ByteArrayOutputStream tgz = new ByteArrayOutputStream();
        try (TarArchiveOutputStream tar = new TarArchiveOutputStream(new GzipCompressorOutputStream(tgz))) {
            addEntry(tar, "dir/one.txt", "one");
            addEntry(tar, "two.txt", "two");
        }
        Files.write(store.resolve("bundle.tar.gz"), tgz.toByteArray());
        CacheStore c = cache(cacheDir, 1_000_000);
        try (Lease l = c.lease(new ObjectRef("text", "text.gz", -1, "", ObjectRef.Unpack.GZIP), List.of())) {
            assertThat(Files.readString(l.path())).isEqualTo("hello data\n".repeat(100));
            assertThat(l.source()).isEqualTo(Source.STORE);
        }
        try (Lease l = c.lease(new ObjectRef("text", "text.gz", -1, "", ObjectRef.Unpack.GZIP), List.of())) {
            assertThat(l.source()).isEqualTo(Source.LOCAL);
        }
        try (Lease l = c.lease(new ObjectRef("bundle", "bundle.tar.gz", -1, "", ObjectRef.Unpack.TAR_GZ),
                List.of())) {
            assertThat(Files.readString(l.path().resolve("dir/one.txt"))).isEqualTo("one");
            assertThat(Files.readString(l.path().resolve("two.txt"))).isEqualTo("two");
        }
        // the stored forms are what peers and the dispatcher see
        assertThat(events).containsExactly("+text", "+bundle");
    }

    @Test
    void aTarEntryThatEscapesItsDirectoryIsRefused() throws Exception {
        ByteArrayOutputStream t = new ByteArrayOutputStream();
        try (TarArchiveOutputStream tar = new TarArchiveOutputStream(t)) {
            addEntry(tar, "../../evil.txt", "gotcha");
        }
        Files.write(store.resolve("evil.tar"), t.toByteArray());
        CacheStore c = cache(cacheDir, 1_000_000);
        assertThatThrownBy(() -> c.lease(new ObjectRef("evil", "evil.tar", -1, "", ObjectRef.Unpack.TAR), List.of()))
                .hasMessageContaining("outside its directory");
        assertThat(cacheDir.getParent().resolve("evil.txt")).doesNotExist();
    }

    @Test
    void aTasksOutputCanBeRegisteredAsAnObject() throws Exception {
        CacheStore c = cache(cacheDir, 10_000);
        Path out = Files.writeString(otherDir.resolve("result.txt"), "computed");
        c.register("results/r1", out);
        assertThat(out).doesNotExist();
        try (Lease l = c.lease(ObjectRef.of("results/r1", "nowhere"), List.of())) {
            assertThat(l.source()).isEqualTo(Source.LOCAL);
            assertThat(Files.readString(l.path())).isEqualTo("computed");
        }
        assertThat(events).containsExactly("+results/r1");
    }

    static void addEntry(TarArchiveOutputStream tar, String name, String text) throws IOException {
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        TarArchiveEntry e = new TarArchiveEntry(name);
        e.setSize(b.length);
        tar.putArchiveEntry(e);
        tar.write(b);
        tar.closeArchiveEntry();
    }
}
