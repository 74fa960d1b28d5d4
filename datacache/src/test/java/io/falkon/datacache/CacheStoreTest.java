package io.falkon.datacache;

import io.falkon.datacache.eviction.Lru;
import io.falkon.datacache.fetch.ObjectRef;
import io.falkon.datacache.fetch.PeerFetcher;
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
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
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
        return cache(dir, capacity, Revalidate.STAT);
    }

    CacheStore cache(Path dir, long capacity, Revalidate revalidate) throws IOException {
        CacheStore c = new CacheStore(dir, capacity, new Lru(), new StoreFetcher(store, http, null), http, token,
                revalidate, new CacheListener() {
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
        a.close();
    }

    @Test
    void anObjectThatCannotBeCachedIsReadThroughNotRefused() throws Exception {
        object("a", 400);
        object("d", 700);
        object("huge", 5000);
        CacheStore c = cache(cacheDir, 1000);
        Lease a = c.lease(ObjectRef.of("a", "a"), List.of());
        // no room while a is in use: d is read through, and the cache is as it was
        Path copy;
        try (Lease d = c.lease(ObjectRef.of("d", "d"), List.of())) {
            assertThat(d.cached()).isFalse();
            assertThat(d.source()).isEqualTo(Source.STORE);
            copy = otherDir.resolve("d-copy");
            d.copyTo(copy);
        }
        assertThat(Files.readAllBytes(copy)).isEqualTo(Files.readAllBytes(store.resolve("d")));
        assertThat(c.contains("d")).isFalse();
        a.close();
        // larger than the whole cache: read through as well
        try (Lease h = c.lease(ObjectRef.of("huge", "huge"), List.of())) {
            assertThat(h.cached()).isFalse();
            assertThat(h.size()).isEqualTo(5000);
        }
        assertThat(c.contains("huge")).isFalse();
        assertThat(events).containsExactly("+a");
        try (var left = Files.list(cacheDir.resolve("incoming"))) {
            assertThat(left).as("read-through copies are gone once their lease closes").isEmpty();
        }
    }

    @Test
    void sizeAndChecksumAreVerifiedAndABadCopyIsNotKept() throws Exception {
        Path src = object("x", 100);
        String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(src)));
        CacheStore c = cache(cacheDir, 10_000);
        assertThatThrownBy(() -> c.lease(new ObjectRef("x", "x", 99, "", ObjectRef.Unpack.NONE), List.of()))
                .hasMessageContaining("got 100 bytes").hasMessageContaining("declared 99")
                .matches(e -> ((FetchException) e).permanent(), "permanent: the store has it so");
        assertThatThrownBy(() -> c.lease(new ObjectRef("x", "x", -1, "sha256:" + "0".repeat(64),
                ObjectRef.Unpack.NONE), List.of())).hasMessageContaining("checksum mismatch");
        assertThat(c.contains("x")).isFalse();
        try (Lease ok = c.lease(new ObjectRef("x", "x", 100, "sha256:" + sha, ObjectRef.Unpack.NONE), List.of())) {
            assertThat(ok.source()).isEqualTo(Source.STORE);
        }
        assertThatThrownBy(() -> c.lease(ObjectRef.of("nope", "no/such/file"), List.of()))
                .hasMessageContaining("cannot fetch nope").hasMessageContaining("does not exist in the shared store")
                .matches(e -> ((FetchException) e).permanent(), "permanent");
        assertThatThrownBy(() -> c.lease(ObjectRef.of("escape", "../../etc/passwd"), List.of()))
                .hasMessageContaining("leaves the shared store root")
                .matches(e -> ((FetchException) e).permanent(), "permanent");
        assertThatThrownBy(() -> c.lease(ObjectRef.of("rel", "file:x"), List.of()))
                .hasMessageContaining("not an absolute file: URL")
                .matches(e -> ((FetchException) e).permanent(), "permanent");
        Files.createSymbolicLink(store.resolve("link-out"), otherDir.resolve("outside"));
        Files.writeString(otherDir.resolve("outside"), "not the store's");
        assertThatThrownBy(() -> c.lease(ObjectRef.of("out", "link-out"), List.of()))
                .hasMessageContaining("outside the shared store root");
    }

    @Test
    void aCopyThatNoLongerMatchesWhatTheTaskDeclaresIsFetchedAgain() throws Exception {
        Path src = object("v", 1000);
        CacheStore c = cache(cacheDir, 100_000, Revalidate.NEVER);
        try (Lease l = c.lease(ObjectRef.of("v", "v"), List.of())) {
            assertThat(l.source()).isEqualTo(Source.STORE);
        }
        // the store file is replaced; the id stays, and NEVER does not look at the store
        byte[] next = "version two".getBytes(StandardCharsets.UTF_8);
        Files.write(src, next);
        try (Lease stale = c.lease(ObjectRef.of("v", "v"), List.of())) {
            assertThat(stale.source()).as("NEVER trusts the id").isEqualTo(Source.LOCAL);
        }
        String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(next));
        try (Lease l = c.lease(new ObjectRef("v", "v", -1, "sha256:" + sha, ObjectRef.Unpack.NONE), List.of())) {
            assertThat(l.source()).isEqualTo(Source.STORE);
            assertThat(l.refetched()).isTrue();
            assertThat(Files.readAllBytes(l.path())).isEqualTo(next);
        }
        Files.write(src, new byte[500]);
        try (Lease l = c.lease(new ObjectRef("v", "v", 500, "", ObjectRef.Unpack.NONE), List.of())) {
            assertThat(l.refetched()).as("a declared size the copy does not have").isTrue();
            assertThat(l.size()).isEqualTo(500);
        }
        assertThat(c.refetches()).isEqualTo(2);
        assertThat(events).containsExactly("+v", "-v", "+v", "-v", "+v");
    }

    @Test
    void withStatRevalidationAChangedStoreFileIsFetchedAgain() throws Exception {
        Path src = object("s", 1000);
        CacheStore c = cache(cacheDir, 100_000, Revalidate.STAT);
        c.lease(ObjectRef.of("s", "s"), List.of()).close();
        try (Lease l = c.lease(ObjectRef.of("s", "s"), List.of())) {
            assertThat(l.source()).as("unchanged: a hit").isEqualTo(Source.LOCAL);
        }
        Files.write(src, "changed".getBytes(StandardCharsets.UTF_8));
        Files.setLastModifiedTime(src, java.nio.file.attribute.FileTime.fromMillis(
                Files.getLastModifiedTime(src).toMillis() + 5000));
        try (Lease l = c.lease(ObjectRef.of("s", "s"), List.of())) {
            assertThat(l.refetched()).isTrue();
            assertThat(Files.readString(l.path())).isEqualTo("changed");
        }
    }

    @Test
    void aTaskChangingItsCopyLeavesTheCachedCopyAndWhatPeersGetIntact() throws Exception {
        Path src = object("t", 4000);
        byte[] original = Files.readAllBytes(src);
        CacheStore holder = cache(otherDir, 100_000);
        Path taskCopy = store.resolve("task-sandbox-in.bin");
        try (Lease l = holder.lease(ObjectRef.of("t", "t"), List.of())) {
            l.copyTo(taskCopy);
        }
        taskCopy.toFile().setWritable(true);
        Files.writeString(taskCopy, "CORRUPT", java.nio.file.StandardOpenOption.APPEND);
        try (Lease l = holder.lease(ObjectRef.of("t", "t"), List.of())) {
            assertThat(Files.readAllBytes(l.path())).isEqualTo(original);
        }
        PeerServer server = PeerServer.start(holder, "127.0.0.1", 0, token);
        closing.add(server);
        String peer = "127.0.0.1:" + server.port();
        try (Lease l = cache(cacheDir, 100_000).lease(ObjectRef.of("t", "t"), List.of(peer))) {
            assertThat(l.source()).isEqualTo(Source.PEER);
            assertThat(Files.readAllBytes(l.path())).isEqualTo(original);
        }
    }

    @Test
    void aCachedCopyChangedBehindTheCachesBackIsRefusedByThePeerThatReceivesIt() throws Exception {
        Path src = object("r", 4000);
        CacheStore holder = cache(otherDir, 100_000);
        Path cached;
        try (Lease l = holder.lease(ObjectRef.of("r", "r"), List.of())) {
            cached = l.path();
        }
        // what root could do to the cache directory itself
        cached.toFile().setWritable(true);
        Files.writeString(cached, "CORRUPT", java.nio.file.StandardOpenOption.APPEND);
        PeerServer server = PeerServer.start(holder, "127.0.0.1", 0, token);
        closing.add(server);
        try (Lease l = cache(cacheDir, 100_000).lease(ObjectRef.of("r", "r"), List.of("127.0.0.1:" + server.port()))) {
            assertThat(l.source()).as("the peer's bytes do not match its own record").isEqualTo(Source.STORE);
            assertThat(Files.readAllBytes(l.path())).isEqualTo(Files.readAllBytes(src));
        }
    }

    @Test
    void outputsAreSavedWholeUnderTheirIdAndMayNotLeaveTheOutputDirectory() throws Exception {
        OutputStore out = new OutputStore(store.resolve("outputs"));
        Path file = Files.writeString(otherDir.resolve("o.txt"), "result");
        Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("r--r-----"));
        Path saved = out.save("run-1/o.txt", new OutputFile(file, false));
        assertThat(saved).isEqualTo(store.resolve("outputs/run-1/o.txt"));
        assertThat(Files.readString(saved)).isEqualTo("result");
        assertThat(file).as("a file that may not be moved is copied: it stays").exists();
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(saved)))
                .as("the copy has the file's permission bits, as a moved file would").isEqualTo("r--r-----");
        for (String bad : List.of("../escape", "/abs", "a/../../b", "x\u0000y", "a//b")) {
            assertThatThrownBy(() -> out.save(bad, new OutputFile(file, true))).as(bad)
                    .hasMessageContaining("cannot be saved");
        }
        assertThat(file).as("a refused id moves nothing").exists();
        Path moved = out.save("run-1/m.txt", new OutputFile(file, true));
        assertThat(file).as("the sandbox's own file is moved").doesNotExist();
        assertThat(moved).hasContent("result");
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
    void aGatherBringsWhatOnePeerHoldsInOneRequestEachObjectVerifiedAndLeavesTheRestToTheTask() throws Exception {
        CacheStore holder = cache(otherDir, 10_000_000);
        List<ObjectRef> refs = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            object("part-" + i, 100 + i * 7); // sizes not multiples of 512: padding in the tar stream
            ObjectRef ref = new ObjectRef("parts/" + i, "part-" + i, 100 + i * 7, "", ObjectRef.Unpack.NONE);
            if (i != 13) { // the peer lacks one
                holder.lease(ref, List.of()).close();
            }
            refs.add(ref);
        }
        // one declared wrong: the peer's copy is refused, and that input is left to the task's own fetch
        refs.set(7, new ObjectRef("parts/7", "part-7", 149, "sha256:" + "0".repeat(64), ObjectRef.Unpack.NONE));
        PeerServer server = PeerServer.start(holder, "127.0.0.1", 0, token);
        closing.add(server);
        CacheStore c = cache(cacheDir, 10_000_000);
        Map<String, Lease> got = c.gather("127.0.0.1:" + server.port(), refs);
        try {
            assertThat(got).hasSize(298).doesNotContainKeys("parts/7", "parts/13");
            for (Map.Entry<String, Lease> e : got.entrySet()) {
                int i = Integer.parseInt(e.getKey().substring("parts/".length()));
                assertThat(e.getValue().source()).isEqualTo(Source.PEER);
                assertThat(e.getValue().bytesMoved()).isEqualTo(100 + i * 7);
                assertThat(Files.readAllBytes(e.getValue().path())).isEqualTo(Files.readAllBytes(store.resolve("part-" + i)));
            }
        } finally {
            got.values().forEach(Lease::close);
        }
        try (Lease l = c.lease(refs.get(0), List.of())) {
            assertThat(l.source()).as("it stays cached for the next task").isEqualTo(Source.LOCAL);
        }
        try (Lease l = c.lease(refs.get(13), List.of())) {
            assertThat(l.source()).as("what the peer lacked comes from the store").isEqualTo(Source.STORE);
        }
        assertThat(c.gather("127.0.0.1:" + server.port(), refs.subList(0, 5))).as("nothing to gather: all cached")
                .isEmpty();
    }

    @Test
    void aGatherTakesOnlyWhatWasAskedAsDeclaredAndMatchingThePeersRecord() throws Exception {
        byte[] good = "0123456789".getBytes(StandardCharsets.UTF_8);
        String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(good));
        java.io.ByteArrayOutputStream tar = new java.io.ByteArrayOutputStream();
        try (org.apache.commons.compress.archivers.tar.TarArchiveOutputStream out =
                     new org.apache.commons.compress.archivers.tar.TarArchiveOutputStream(tar)) {
            Object[][] entries = {
                    {"0." + sha, good},                                       // as asked: arrives
                    {"1." + sha, "01234567890123456789".getBytes(StandardCharsets.UTF_8)}, // longer than declared
                    {"7." + sha, good},                                       // answers nothing asked
                    {"2." + "0".repeat(64), good},                            // not what the peer recorded
                    {"0." + sha, good}};                                      // the same index again
            for (Object[] e : entries) {
                byte[] data = (byte[]) e[1];
                org.apache.commons.compress.archivers.tar.TarArchiveEntry te =
                        new org.apache.commons.compress.archivers.tar.TarArchiveEntry((String) e[0], true);
                te.setSize(data.length);
                out.putArchiveEntry(te);
                out.write(data);
                out.closeArchiveEntry();
            }
        }
        com.sun.net.httpserver.HttpServer liar = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress("127.0.0.1", 0), 0);
        liar.createContext("/objects", ex -> {
            ex.getRequestBody().readAllBytes();
            ex.sendResponseHeaders(200, tar.size());
            ex.getResponseBody().write(tar.toByteArray());
            ex.close();
        });
        liar.start();
        closing.add(() -> liar.stop(0));
        List<ObjectRef> refs = List.of(new ObjectRef("g/0", "g0", 10, "", ObjectRef.Unpack.NONE),
                new ObjectRef("g/1", "g1", 10, "", ObjectRef.Unpack.NONE),
                new ObjectRef("g/2", "g2", 10, "", ObjectRef.Unpack.NONE));
        CacheStore c = cache(cacheDir, 100_000);
        Map<String, Lease> got = c.gather("127.0.0.1:" + liar.getAddress().getPort(), refs);
        try {
            assertThat(got).containsOnlyKeys("g/0");
            assertThat(Files.readAllBytes(got.get("g/0").path())).isEqualTo(good);
        } finally {
            got.values().forEach(Lease::close);
        }
    }

    @Test
    void aBatchRequestIsRefusedWithoutTheTokenAndWhenItNamesTooManyObjects() throws Exception {
        PeerServer server = PeerServer.start(cache(otherDir, 100_000), "127.0.0.1", 0, token);
        closing.add(server);
        URI uri = URI.create("http://127.0.0.1:" + server.port() + "/objects");
        HttpResponse<String> anonymous = http.send(HttpRequest.newBuilder(uri)
                .POST(HttpRequest.BodyPublishers.ofString("a\nb")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(anonymous.statusCode()).isEqualTo(401);
        String many = String.join("&", java.util.Collections.nCopies(PeerServer.MAX_BATCH + 1, "id=x"));
        HttpResponse<String> tooMany = http.send(HttpRequest.newBuilder(uri).header("Authorization",
                io.falkon.protocol.auth.HttpAuth.bearer(token)).POST(HttpRequest.BodyPublishers.ofString(many)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(tooMany.statusCode()).isEqualTo(400);
        assertThat(tooMany.body()).contains("1.." + PeerServer.MAX_BATCH);
        HttpResponse<String> none = http.send(HttpRequest.newBuilder(uri).header("Authorization",
                io.falkon.protocol.auth.HttpAuth.bearer(token)).POST(HttpRequest.BodyPublishers.ofString("id=nobody"))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(none.statusCode()).as("holds none of them: an empty archive").isEqualTo(200);
        assertThat(none.body()).hasSize(1024);
        // one id per line (the old form), an id that is two lines, a NUL, a '..', a broken escape, another
        // field: refused whole, so that no id is ever read as another
        for (String bad : List.of("evil\ngood", "id=k%0Aevil&id=good", "id=res%2Fx%00-other", "id=a%2F..%2Fb",
                "id=%ZZ", "id=a&other=b", "id=")) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri).header("Authorization",
                    io.falkon.protocol.auth.HttpAuth.bearer(token)).POST(HttpRequest.BodyPublishers.ofString(bad))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(bad).isEqualTo(400);
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
                Token.of("another-deployment"), Revalidate.STAT, new CacheListener() {
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
    void aTarEntryThatIsALinkIsRefusedSayingSo() throws Exception {
        ByteArrayOutputStream t = new ByteArrayOutputStream();
        try (TarArchiveOutputStream tar = new TarArchiveOutputStream(t)) {
            TarArchiveEntry link = new TarArchiveEntry("passwd", TarArchiveEntry.LF_SYMLINK);
            link.setLinkName("/etc/passwd");
            tar.putArchiveEntry(link);
            tar.closeArchiveEntry();
        }
        Files.write(store.resolve("links.tar"), t.toByteArray());
        CacheStore c = cache(cacheDir, 1_000_000);
        assertThatThrownBy(() -> c.lease(new ObjectRef("links", "links.tar", -1, "", ObjectRef.Unpack.TAR), List.of()))
                .hasMessageContaining("is a symbolic link to '/etc/passwd'")
                .matches(e -> ((FetchException) e).permanent(), "permanent");
    }

    @Test
    void aTasksOutputCanBeRegisteredAsAnObject() throws Exception {
        CacheStore c = cache(cacheDir, 10_000);
        Path out = Files.writeString(otherDir.resolve("result.txt"), "computed");
        c.register("results/r1", new OutputFile(out, true));
        assertThat(out).as("the sandbox's own file is moved in").doesNotExist();
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
