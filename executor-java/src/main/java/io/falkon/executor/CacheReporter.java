package io.falkon.executor;

import io.falkon.datacache.CacheListener;
import io.falkon.datacache.CacheStore;
import io.falkon.protocol.Message;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Tells the dispatcher what this executor's cache holds (data diffusion): changes as they happen,
 * coalesced into one CACHE_UPDATE per I/O-thread turn, and the full contents on every connection
 * and periodically (the index is loosely coherent; a full summary repairs any drift).
 */
final class CacheReporter implements CacheListener {
    private record Change(String id, long size, boolean added) {
    }

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
            loop.execute(this::flush);
        }
    }

    private void flush() {
        flushScheduled.set(false);
        List<Message.CachedObject> added = new ArrayList<>();
        List<String> removed = new ArrayList<>();
        Change c;
        while ((c = changes.poll()) != null) {
            String id = c.id();
            if (c.added()) {
                removed.remove(id);
                added.add(new Message.CachedObject(id, c.size()));
            } else {
                added.removeIf(o -> o.id().equals(id));
                removed.add(id);
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
