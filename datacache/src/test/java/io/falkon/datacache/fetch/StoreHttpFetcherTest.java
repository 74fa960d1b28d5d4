package io.falkon.datacache.fetch;

import com.sun.net.httpserver.HttpServer;
import io.falkon.datacache.fetch.ObjectRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** The shared store over HTTP: a real HTTP server (the JDK's) on 127.0.0.1 serving the objects. */
class StoreHttpFetcherTest extends FetcherContract {
    private final Map<String, byte[]> served = new ConcurrentHashMap<>();
    private HttpServer server;

    @BeforeEach
    void serve() throws Exception {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            byte[] body = served.get(exchange.getRequestURI().getPath().substring(1));
            if (body == null) {
                exchange.sendResponseHeaders(404, -1);
            } else {
                exchange.sendResponseHeaders(200, body.length == 0 ? -1 : body.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            }
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private String url(String id) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/" + id;
    }

    @Override
    Fetcher fetcher() {
        return new StoreFetcher(null, HttpClient.newHttpClient(), null);
    }

    @Override
    ObjectRef present(String id, byte[] bytes) {
        served.put(id, bytes);
        return ObjectRef.of(id, url(id));
    }

    @Override
    ObjectRef absent(String id) {
        return ObjectRef.of(id, url(id));
    }
}
