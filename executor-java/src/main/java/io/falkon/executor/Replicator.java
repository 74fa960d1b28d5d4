package io.falkon.executor;

import io.falkon.datacache.CacheStore;
import io.falkon.datacache.FetchException;
import io.falkon.datacache.Lease;
import io.falkon.datacache.fetch.ObjectRef;
import io.falkon.protocol.LogSafe;
import io.falkon.protocol.Message;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The executor's part of a multicast (REPLICATE): fetches the objects the dispatcher names into
 * the cache, ahead of the tasks that will read them, each from the peers named (else the store)
 * and verified like any fetch; the cache reports each arrival (CACHE_UPDATE), which is how the
 * dispatcher learns that this executor can now pass the object on. Off the I/O thread, one
 * thread per object at most, gone when idle.
 */
final class Replicator {
    private static final Logger log = LoggerFactory.getLogger(Replicator.class);
    private final CacheStore cache;
    private final ExecutorService fetchers = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "falkon-replicate");
        t.setDaemon(true);
        return t;
    });

    Replicator(CacheStore cache) {
        this.cache = cache;
    }

    void replicate(Message.Replicate order) {
        for (Message.Replica r : order.objects()) {
            fetchers.execute(() -> fetch(r));
        }
    }

    private void fetch(Message.Replica r) {
        ObjectRef ref = new ObjectRef(r.id(), r.source(), r.size(), r.checksum(), ObjectRef.Unpack.NONE);
        try (Lease copy = cache.lease(ref, r.peers())) {
            log.debug("replicated {} ({} bytes from {})", LogSafe.text(r.id()), copy.bytesMoved(), copy.source());
        } catch (FetchException | RuntimeException e) {
            log.warn("cannot replicate {}: {}", LogSafe.text(r.id()), LogSafe.text(String.valueOf(e.getMessage())));
        }
    }

    void close() {
        fetchers.shutdownNow();
    }
}
