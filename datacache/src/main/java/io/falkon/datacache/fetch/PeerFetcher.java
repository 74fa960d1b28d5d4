package io.falkon.datacache.fetch;

import io.falkon.protocol.auth.HttpAuth;
import io.falkon.protocol.auth.Token;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/** Reads an object from a peer executor's cache, served by its {@link io.falkon.datacache.peer.PeerServer}. */
public final class PeerFetcher implements Fetcher {
    private final HttpClient http;
    private final String peer;
    private final Token token;

    /**
     * @param peer  the peer's cache server, {@code host:port}
     * @param token what the peer requires (the deployment's token)
     */
    public PeerFetcher(HttpClient http, String peer, Token token) {
        this.http = http;
        this.peer = peer;
        this.token = token;
    }

    public static URI uri(String peer, String id) {
        return URI.create("http://" + peer + "/objects?id=" + URLEncoder.encode(id, StandardCharsets.UTF_8));
    }

    /** The header with which a peer says what it recorded of the object it sends. */
    public static final String SHA256_HEADER = "X-Falkon-SHA256";

    @Override
    public Opened open(ObjectRef ref) throws IOException {
        HttpResponse<InputStream> resp = StoreFetcher.HttpFetch.send(http, uri(peer, ref.id()), ref.id(),
                token.required() ? HttpAuth.bearer(token) : null);
        String recorded = resp.headers().firstValue(SHA256_HEADER).orElse(null);
        if (recorded == null) {
            resp.body().close();
            throw new IOException("peer " + peer + " did not say what it recorded of " + ref.id()
                    + " (no " + SHA256_HEADER + " header)");
        }
        return new Opened(resp.body(), recorded, null);
    }

    @Override
    public String describe(ObjectRef ref) {
        return "peer " + peer;
    }

    /**
     * Asks the peer for many objects in one request ({@code POST /objects}, their ids as a form:
     * {@code id=ID&id=ID...}, each percent-encoded, so that no id can be read as two):
     * a 200 answer whose body is a tar stream of those it holds, each entry named {@code INDEX.SHA256}
     * ({@link io.falkon.datacache.peer.PeerServer}).
     */
    /** The ids as the batch request's form. */
    static String form(List<String> ids) {
        StringBuilder sb = new StringBuilder();
        for (String id : ids) {
            sb.append(sb.length() == 0 ? "id=" : "&id=").append(URLEncoder.encode(id, StandardCharsets.UTF_8));
        }
        return sb.toString();
    }

    public InputStream batch(List<String> ids) throws IOException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://" + peer + "/objects"))
                .timeout(Duration.ofMinutes(10)).header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form(ids)));
        if (token.required()) {
            b.header("Authorization", HttpAuth.bearer(token));
        }
        HttpResponse<InputStream> resp;
        try {
            resp = http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted asking peer " + peer + " for " + ids.size() + " objects", e);
        }
        if (resp.statusCode() != 200) {
            resp.body().close();
            throw new IOException("peer " + peer + " answered HTTP " + resp.statusCode() + " for " + ids.size()
                    + " objects");
        }
        return resp.body();
    }
}
