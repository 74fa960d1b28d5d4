package io.falkon.datacache.fetch;


import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
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
    public Opened open(ObjectRef ref) throws IOException {
        String src = ref.source();
        if (isHttp(src)) {
            InputStream in = HttpFetch.get(http, URI.create(src), ref.id(), null);
            return new Opened(bandwidth == null ? in : bandwidth.limit(in), null, null);
        }
        Path p = path(src);
        Stamp stamp = stamp(p);
        if (stamp == null) {
            throw new PermanentFetchException(p + " does not exist in the shared store");
        }
        InputStream in = Files.newInputStream(p);
        return new Opened(bandwidth == null ? in : bandwidth.limit(in), null, stamp);
    }

    /**
     * The store file's size and modification time now, for revalidating a cached copy; null when
     * the source is not a file (HTTP), or is gone.
     */
    public Stamp stamp(ObjectRef ref) throws IOException {
        return isHttp(ref.source()) ? null : stamp(path(ref.source()));
    }

    private static Stamp stamp(Path p) throws IOException {
        try {
            BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
            return a.isRegularFile() ? new Stamp(a.size(), a.lastModifiedTime().toMillis()) : null;
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    private static boolean isHttp(String src) {
        return src.startsWith("http://") || src.startsWith("https://");
    }

    /**
     * The file a source names. A relative source must stay inside the store root, following
     * symbolic links too: a link in the store pointing outside it is refused.
     */
    private Path path(String src) throws IOException {
        if (src.startsWith("file:")) {
            if (!src.startsWith("file:/")) {
                throw new PermanentFetchException("'" + src + "' is not an absolute file: URL (file:/path/to/object; "
                        + "a path relative to the store root is written without file:)");
            }
            try {
                return Path.of(URI.create(src));
            } catch (IllegalArgumentException e) {
                throw new PermanentFetchException("'" + src + "' is not a file: URL: " + e.getMessage());
            }
        }
        Path p = Path.of(src);
        if (p.isAbsolute()) {
            return p;
        }
        if (root == null) {
            throw new PermanentFetchException("'" + src + "' is a relative source but the executor has no shared "
                    + "store root (--store DIR)");
        }
        Path resolved = root.resolve(p).normalize();
        if (!resolved.startsWith(root.normalize())) {
            throw new PermanentFetchException("'" + src + "' leaves the shared store root");
        }
        if (Files.exists(resolved)) {
            Path real = resolved.toRealPath();
            if (!real.startsWith(root.toRealPath())) {
                throw new PermanentFetchException("'" + src + "' is a link to " + real + ", outside the shared store "
                        + "root");
            }
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
            return send(http, uri, what, authorization).body();
        }

        /** The same, with the response's headers: a 200 response whose body is still to be read. */
        static HttpResponse<InputStream> send(HttpClient http, URI uri, String what, String authorization)
                throws IOException {
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
            return resp;
        }
    }
}
