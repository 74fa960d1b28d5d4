package io.falkon.datacache.fetch;

import io.falkon.datacache.CacheListener;
import io.falkon.datacache.CacheStore;
import io.falkon.datacache.Lease;
import io.falkon.datacache.fetch.ObjectRef;
import io.falkon.datacache.Revalidate;
import io.falkon.datacache.eviction.Lru;
import io.falkon.datacache.peer.PeerServer;
import io.falkon.protocol.auth.Token;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A peer's cache: a real {@link PeerServer} on 127.0.0.1 in front of a real {@link CacheStore} that
 * took the objects from its own store, presenting the deployment's token.
 */
class PeerFetcherTest extends FetcherContract {
    private final HttpClient http = HttpClient.newHttpClient();
    private final Token token = Token.random();
    @TempDir
    Path store;
    @TempDir
    Path cacheDir;
    private CacheStore holder;
    private PeerServer server;

    @BeforeEach
    void start() throws Exception {
        holder = new CacheStore(cacheDir, 10_000_000, new Lru(), new StoreFetcher(store, http, null), http, token,
                Revalidate.STAT, new CacheListener() {
                    @Override
                    public void added(String id, long size) {
                    }

                    @Override
                    public void removed(String id) {
                    }
                });
        server = PeerServer.start(holder, "127.0.0.1", 0, token);
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
        holder.close();
    }

    @Override
    Fetcher fetcher() {
        return new PeerFetcher(http, "127.0.0.1:" + server.port(), token);
    }

    @Override
    ObjectRef present(String id, byte[] bytes) throws Exception {
        Files.write(store.resolve(id), bytes);
        ObjectRef ref = ObjectRef.of(id, id);
        try (Lease l = holder.lease(ref, List.of())) { // the peer holds it once it has fetched it itself
            l.size();
        }
        return ref;
    }

    @Override
    ObjectRef absent(String id) {
        return ObjectRef.of(id, id);
    }

    @Test
    void aPeerRefusesAFetcherWithoutTheDeploymentsToken() {
        Fetcher stranger = new PeerFetcher(http, "127.0.0.1:" + server.port(), Token.random());
        assertThatThrownBy(() -> stranger.open(present("private", bytes(100, 9)))).isInstanceOf(IOException.class);
    }
}
