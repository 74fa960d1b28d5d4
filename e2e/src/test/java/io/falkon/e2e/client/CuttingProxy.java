package io.falkon.e2e.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on 127.0.0.1 in front of a dispatcher whose connections a test can cut at any moment
 * (both directions closed at once, mid-frame if it happens so), as a flaky network would.
 */
final class CuttingProxy implements AutoCloseable {
    private final ServerSocket server;
    private final int targetPort;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private final AtomicInteger accepted = new AtomicInteger();
    private volatile boolean closed;

    CuttingProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::accept, "cutting-proxy-accept");
        accept.setDaemon(true);
        accept.start();
    }

    String address() {
        return "127.0.0.1:" + server.getLocalPort();
    }

    /** Connections accepted so far. */
    int accepted() {
        return accepted.get();
    }

    /** Cuts every connection now open; new ones are accepted as before. */
    void cutAll() {
        for (Socket s : open) {
            try {
                s.close();
            } catch (IOException e) {
                // already gone
            }
        }
        open.clear();
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = server.accept();
                Socket target = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                client.setTcpNoDelay(true);
                target.setTcpNoDelay(true);
                open.add(client);
                open.add(target);
                accepted.incrementAndGet();
                pump(client, target);
                pump(target, client);
            } catch (IOException e) {
                if (!closed) {
                    continue; // the dispatcher refused one: the client retries
                }
                return;
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[64 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    out.write(buf, 0, n);
                }
            } catch (IOException e) {
                // cut, or closed by a side
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "cutting-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // nothing to do
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        server.close();
        cutAll();
    }
}
