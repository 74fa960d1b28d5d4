package io.falkon.protocol.session;

import io.falkon.protocol.Message;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Request/reply correlation on a client's side of the dispatcher (a client connection, the WS
 * gateway's links): each request gets an id (32 bits, never 0, which marks what nobody asked for,
 * e.g. a lease's DESTROYED) and a future its reply completes. Which messages are replies, and to
 * what, is {@link #replyTo}: the one place that list is kept. Thread-safe.
 */
public final class Requests {
    private final AtomicLong ids = new AtomicLong();
    private final Map<Long, CompletableFuture<Message>> waiting = new ConcurrentHashMap<>();

    /** Registers {@code reply} under a new request id, which it returns. */
    public long open(CompletableFuture<Message> reply) {
        long id;
        do {
            id = ids.incrementAndGet() & 0xFFFF_FFFFL;
        } while (id == 0);
        waiting.put(id, reply);
        return id;
    }

    /** What waits for the reply to request {@code id}, no longer waiting; null if nothing does. */
    public CompletableFuture<Message> take(long id) {
        return waiting.remove(id);
    }

    /** Everything still waiting, no longer waiting (to fail it: the connection broke, or closes). */
    public List<CompletableFuture<Message>> takeAll() {
        List<CompletableFuture<Message>> all = new ArrayList<>();
        for (Long id : waiting.keySet()) {
            CompletableFuture<Message> f = waiting.remove(id);
            if (f != null) {
                all.add(f);
            }
        }
        return all;
    }

    /**
     * The id of the request {@code m} answers: every reply the dispatcher sends a client, and an
     * ERROR (0 when it answers nothing: the connection ends); -1 when {@code m} is not a reply
     * (DELIVER, HEARTBEAT).
     */
    public static long replyTo(Message m) {
        if (m instanceof Message.InstanceCreated c) {
            return c.requestId();
        } else if (m instanceof Message.Submitted s) {
            return s.requestId();
        } else if (m instanceof Message.Status s) {
            return s.requestId();
        } else if (m instanceof Message.Destroyed d) {
            return d.requestId();
        } else if (m instanceof Message.Halted h) {
            return h.requestId();
        } else if (m instanceof Message.TasksCancelled c) {
            return c.requestId();
        } else if (m instanceof Message.Attached a) {
            return a.requestId();
        } else if (m instanceof Message.ErrorMessage e) {
            return e.requestId();
        }
        return -1;
    }
}
