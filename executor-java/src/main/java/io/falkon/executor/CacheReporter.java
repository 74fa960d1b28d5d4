package io.falkon.executor;

import io.falkon.datacache.CacheListener;
import io.falkon.datacache.CacheStore;
import io.falkon.protocol.Message;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Tells the dispatcher what this executor's cache holds (data diffusion): changes as they happen,
 * after waiting up to {@link #CHANGES_MILLIS} for company and coalesced into one CACHE_UPDATE (a
 * gather that caches a thousand objects is a few messages, not a thousand for the dispatcher to
 * handle), and the full contents on every connection and periodically (the index is loosely
 * coherent; a full summary repairs any drift). Changes pending when results are sent go ahead of
 * them ({@link #sendPending}): when the dispatcher learns that a task finished, it knows what the
 * task left in the cache, and the next task that needs it is sent here or to a peer that asks here.
 */
final class CacheReporter implements CacheListener {
    private record Change(String id, long size, boolean added) {
    }

    /** How long the first change of a burst waits for the others (as the C executor's CACHE_CHANGES_MS). */
    static final long CHANGES_MILLIS = 10;

    private final EventLoop loop;
    private final Supplier<Channel> channel;
    private final ConcurrentLinkedQueue<Change> changes = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean flushScheduled = new AtomicBoolean();
    private CacheStore cache;

    CacheReporter(EventLoop loop, Supplier<Channel> channel) {
        this.loop = loop;
        this.channel = channel;
    }

    void attach(CacheStore store) {
        this.cache = store;
    }

    @Override
    public void added(String id, long size) {
        changed(new Change(id, size, true));
    }

    @Override
    public void removed(String id) {
        changed(new Change(id, 0, false));
    }

    private void changed(Change c) {
        changes.add(c);
        if (channel.get() != null && flushScheduled.compareAndSet(false, true)) {
            loop.schedule(this::flush, CHANGES_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    private void flush() {
        flushScheduled.set(false);
        sendPending();
    }

    /** On the I/O thread: the changes pending, now (the results that follow them are sent next). */
    void sendPending() {
        if (changes.isEmpty()) {
            return;
        }
        Map<String, Change> last = new LinkedHashMap<>(); // each object's last change only
        Change c;
        while ((c = changes.poll()) != null) {
            last.remove(c.id());
            last.put(c.id(), c);
        }
        List<Message.CachedObject> added = new ArrayList<>();
        List<String> removed = new ArrayList<>();
        for (Change k : last.values()) {
            if (k.added()) {
                added.add(new Message.CachedObject(k.id(), k.size()));
            } else {
                removed.add(k.id());
            }
        }
        Channel ch = channel.get();
        if ((!added.isEmpty() || !removed.isEmpty()) && ch != null && ch.isActive()) {
            ch.writeAndFlush(new Message.CacheUpdate(false, added, removed), ch.voidPromise());
        }
    }

    /** Every cached object, replacing what the dispatcher's index holds for this executor. */
    Message.CacheUpdate fullSummary() {
        changes.clear(); // the summary supersedes them
        List<Message.CachedObject> all = new ArrayList<>();
        cache.contents().forEach((id, size) -> all.add(new Message.CachedObject(id, size)));
        return new Message.CacheUpdate(true, all, List.of());
    }

    /** On the I/O thread: the full contents now. */
    void sendFullSummary() {
        Channel ch = channel.get();
        if (cache != null && ch != null && ch.isActive()) {
            ch.writeAndFlush(fullSummary(), ch.voidPromise());
        }
    }
}
