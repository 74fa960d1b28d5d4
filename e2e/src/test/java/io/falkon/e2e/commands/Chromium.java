package io.falkon.e2e.commands;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real headless Chromium driven over the Chrome DevTools Protocol (a WebSocket, with the JDK's
 * own client): open a page, evaluate JavaScript in it, take a screenshot. Chromium's
 * {@code --screenshot} cannot be used for a page that keeps a server-sent-events stream open.
 */
final class Chromium implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Process process;
    private final WebSocket page;
    private final Map<Integer, CompletableFuture<JsonNode>> replies = new ConcurrentHashMap<>();
    private final AtomicInteger ids = new AtomicInteger();

    private Chromium(Process process, WebSocket page) {
        this.process = process;
        this.page = page;
    }

    /** Starts Chromium (installing it when missing) with a fresh profile in {@code profile}. */
    static Chromium start(Path profile) throws Exception {
        Path chromium = DebianPackages.ensure("chromium", "chromium");
        ProcessBuilder pb = new ProcessBuilder(chromium.toString(), "--headless=new", "--no-sandbox", "--disable-gpu",
                "--no-first-run", "--remote-debugging-port=0", "--user-data-dir=" + profile,
                "--window-size=1400,1350", "about:blank")
                .redirectErrorStream(true).redirectOutput(profile.resolveSibling("chromium.log").toFile());
        // its other files (shared memory, crash reports, caches) beside the profile, not in /tmp or ~
        Path own = Files.createDirectories(profile.resolveSibling("chromium-home"));
        pb.environment().put("TMPDIR", own.toString());
        pb.environment().put("HOME", own.toString());
        Process p = pb.start();
        Path portFile = profile.resolve("DevToolsActivePort");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.exists(portFile) || Files.readAllLines(portFile).size() < 2) {
            if (System.nanoTime() > deadline || !p.isAlive()) {
                p.destroyForcibly();
                throw new IllegalStateException("chromium did not open its DevTools port; see "
                        + profile.resolveSibling("chromium.log"));
            }
            Thread.sleep(50); // no event to wait on: Chromium writes the file when it is ready
        }
        int port = Integer.parseInt(Files.readAllLines(portFile).get(0).strip());
        HttpClient http = HttpClient.newHttpClient();
        JsonNode targets = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                + "/json/list")).build(), HttpResponse.BodyHandlers.ofString()).body());
        String ws = null;
        for (JsonNode t : targets) {
            if (t.path("type").asText().equals("page")) {
                ws = t.path("webSocketDebuggerUrl").asText();
            }
        }
        if (ws == null) {
            p.destroyForcibly();
            throw new IllegalStateException("chromium has no page to drive: " + targets);
        }
        Chromium[] self = new Chromium[1];
        WebSocket socket = http.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(10))
                .buildAsync(URI.create(ws), new WebSocket.Listener() {
                    private final StringBuilder text = new StringBuilder();

                    @Override
                    public CompletionStage<?> onText(WebSocket w, CharSequence data, boolean last) {
                        text.append(data);
                        if (last) {
                            self[0].received(text.toString());
                            text.setLength(0);
                        }
                        w.request(1);
                        return null;
                    }
                }).get(30, TimeUnit.SECONDS);
        self[0] = new Chromium(p, socket);
        return self[0];
    }

    private void received(String message) {
        try {
            JsonNode m = JSON.readTree(message);
            if (m.has("id")) {
                CompletableFuture<JsonNode> f = replies.remove(m.get("id").asInt());
                if (f != null) {
                    if (m.has("error")) {
                        f.completeExceptionally(new IllegalStateException("DevTools: " + m.get("error")));
                    } else {
                        f.complete(m.get("result"));
                    }
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("DevTools sent something that is not JSON", e);
        }
    }

    /** Calls a DevTools method and waits for its result. */
    JsonNode call(String method, ObjectNode params) throws Exception {
        int id = ids.incrementAndGet();
        CompletableFuture<JsonNode> reply = new CompletableFuture<>();
        replies.put(id, reply);
        ObjectNode m = JSON.createObjectNode().put("id", id).put("method", method);
        m.set("params", params == null ? JSON.createObjectNode() : params);
        page.sendText(m.toString(), true).get(10, TimeUnit.SECONDS);
        return reply.get(60, TimeUnit.SECONDS);
    }

    void open(String url) throws Exception {
        call("Page.enable", null);
        call("Page.navigate", JSON.createObjectNode().put("url", url));
    }

    /** The value of a JavaScript expression in the page (JSON-serialisable values only). */
    JsonNode evaluate(String expression) throws Exception {
        JsonNode r = call("Runtime.evaluate", JSON.createObjectNode().put("expression", expression)
                .put("returnByValue", true));
        if (r.has("exceptionDetails")) {
            throw new IllegalStateException("the page threw: " + r.get("exceptionDetails"));
        }
        return r.path("result").path("value");
    }

    /** A PNG of the page as it is now. */
    byte[] screenshot() throws Exception {
        JsonNode r = call("Page.captureScreenshot", JSON.createObjectNode().put("format", "png")
                .put("captureBeyondViewport", true));
        return Base64.getDecoder().decode(r.get("data").asText());
    }

    @Override
    public void close() {
        page.abort();
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
