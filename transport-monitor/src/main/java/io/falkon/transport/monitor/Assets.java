package io.falkon.transport.monitor;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * The dashboard's files, read once from the jar: the page and its script and style (this
 * package's resources) and uPlot, the chart library, from its WebJar. The browser fetches nothing
 * from anywhere else.
 */
final class Assets {
    /** A file served as is. */
    record Asset(byte[] bytes, String contentType) {
    }

    private static final String UPLOT = "/META-INF/resources/webjars/uplot/1.6.30/dist/";

    static final byte[] INDEX = load("index.html");
    static final byte[] LOGIN = load("login.html");
    private static final Map<String, Asset> FILES = Map.of(
            "/app.js", new Asset(load("app.js"), "text/javascript; charset=utf-8"),
            "/app.css", new Asset(load("app.css"), "text/css; charset=utf-8"),
            "/uplot.js", new Asset(load(UPLOT + "uPlot.iife.min.js"), "text/javascript; charset=utf-8"),
            "/uplot.css", new Asset(load(UPLOT + "uPlot.min.css"), "text/css; charset=utf-8"));

    private Assets() {
    }

    /** The file at {@code path}, or null. */
    static Asset get(String path) {
        return FILES.get(path);
    }

    private static byte[] load(String name) {
        try (InputStream in = Assets.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("dashboard file missing from the jar: " + name);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
