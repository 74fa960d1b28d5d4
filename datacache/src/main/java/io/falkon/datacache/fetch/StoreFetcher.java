package io.falkon.datacache.fetch;

import io.falkon.datacache.ObjectRef;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Reads from the persistent shared store: a file (an absolute path or {@code file:} URL, typically on
 * a shared file system), an {@code http(s):} URL, or a path relative to the store root. An optional
 * {@link TokenBucket} caps the read bandwidth (an emulation of a saturated shared file system, for
 * benchmarks).
 */
public final class StoreFetcher implements Fetcher {
    private final Path root;
    private final HttpClient http;
    private final TokenBucket bandwidth;

    /**
     * @param root      where relative sources live, or {@code null}
     * @param bandwidth a cap on the bytes per second read from the store, or {@code null} for none
     */
    public StoreFetcher(Path root, HttpClient http, TokenBucket bandwidth) {
        this.root = root;
        this.http = http;
        this.bandwidth = bandwidth;
    }

    @Override
    public InputStream open(ObjectRef ref) throws IOException {
        String src = ref.source();
        InputStream in;
        if (src.startsWith("http://") || src.startsWith("https://")) {
            in = HttpFetch.get(http, URI.create(src), ref.id(), null);
        } else {
            Path p = path(src);
            if (!Files.isRegularFile(p)) {
                throw new FileNotFoundException(p + " does not exist in the shared store");
            }
            in = Files.newInputStream(p);
        }
        return bandwidth == null ? in : bandwidth.limit(in);
    }

    private Path path(String src) throws IOException {
        if (src.startsWith("file:")) {
            return Path.of(URI.create(src));
        }
        Path p = Path.of(src);
        if (p.isAbsolute()) {
            return p;
        }
        if (root == null) {
            throw new FileNotFoundException("'" + src + "' is a relative source but the executor has no shared "
                    + "store root (--store DIR)");
        }
        Path resolved = root.resolve(p).normalize();
        if (!resolved.startsWith(root.normalize())) {
            throw new FileNotFoundException("'" + src + "' leaves the shared store root");
        }
        return resolved;
    }

    @Override
    public String describe(ObjectRef ref) {
        return "the shared store (" + ref.source() + ")";
    }

    /** An HTTP GET that streams the body, or says why not. */
    static final class HttpFetch {
        private HttpFetch() {
        }

        /** @param authorization an {@code Authorization} header value, or null */
        static InputStream get(HttpClient http, URI uri, String what, String authorization) throws IOException {
            HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(Duration.ofMinutes(10)).GET();
            if (authorization != null) {
                b.header("Authorization", authorization);
            }
            HttpRequest req = b.build();
            HttpResponse<InputStream> resp;
            try {
                resp = http.send(req, HttpResponse.BodyHandlers.ofInputStream());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted fetching " + what, e);
            }
            if (resp.statusCode() == 404) {
                resp.body().close();
                throw new FileNotFoundException(uri + " has no " + what);
            }
            if (resp.statusCode() != 200) {
                resp.body().close();
                throw new IOException(uri + " answered HTTP " + resp.statusCode() + " for " + what);
            }
            return resp.body();
        }
    }
}
