package io.falkon.e2e.commands;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A shared store over HTTP on 127.0.0.1 that shows whether objects are fetched at once: it holds
 * each request until {@code hold} requests are open together, and from then on answers at once.
 * A client that fetches one object after another never gets there: each of its requests waits out
 * the fallback (so that such a client is slow, and its test fails on {@link #peak()}, instead of
 * hanging). What it counts is what a test asserts; the fallback's length is never asserted.
 */
final class HoldingStore implements AutoCloseable {
    private static final long FALLBACK_MILLIS = 20_000;
    private final int hold;
    private final HttpServer server;
    private final ExecutorService threads = Executors.newFixedThreadPool(16);
    private final Map<String, byte[]> objects = new ConcurrentHashMap<>();
    private int open;
    private int peak;
    private int served;
    private boolean reached;

    HoldingStore(int hold) throws IOException {
        this.hold = hold;
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        server.setExecutor(threads);
        server.createContext("/", this::serve);
        server.start();
    }

    /** Serves {@code bytes} as {@code name}; returns its URL. */
    String put(String name, byte[] bytes) {
        objects.put("/" + name, bytes);
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/" + name;
    }

    private void serve(HttpExchange x) throws IOException {
        byte[] body = objects.get(x.getRequestURI().getPath());
        try (x) {
            synchronized (this) {
                open++;
                peak = Math.max(peak, open);
                if (open >= hold) {
                    reached = true;
                    notifyAll();
                }
                long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(FALLBACK_MILLIS);
                long left;
                while (!reached && (left = until - System.nanoTime()) > 0) {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                }
            }
            if (body == null) {
                x.sendResponseHeaders(404, -1);
                return;
            }
            x.sendResponseHeaders(200, body.length);
            try (OutputStream out = x.getResponseBody()) {
                out.write(body);
            }
            synchronized (this) {
                served++;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            synchronized (this) {
                open--;
            }
        }
    }

    /** The most requests that were open at once. */
    synchronized int peak() {
        return peak;
    }

    /** Objects served whole. */
    synchronized int served() {
        return served;
    }

    /** Starts counting afresh, holding again. */
    synchronized void reset() {
        peak = 0;
        served = 0;
        reached = false;
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
