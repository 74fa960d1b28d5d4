package io.falkon.datacache.fetch;

import io.falkon.datacache.ObjectRef;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;

/** Reads an object from a peer executor's cache, served by its {@link io.falkon.datacache.peer.PeerServer}. */
public final class PeerFetcher implements Fetcher {
    private final HttpClient http;
    private final String peer;

    /** @param peer the peer's cache server, {@code host:port} */
    public PeerFetcher(HttpClient http, String peer) {
        this.http = http;
        this.peer = peer;
    }

    public static URI uri(String peer, String id) {
        return URI.create("http://" + peer + "/objects?id=" + URLEncoder.encode(id, StandardCharsets.UTF_8));
    }

    @Override
    public InputStream open(ObjectRef ref) throws IOException {
        return StoreFetcher.HttpFetch.get(http, uri(peer, ref.id()), ref.id());
    }

    @Override
    public String describe(ObjectRef ref) {
        return "peer " + peer;
    }
}
