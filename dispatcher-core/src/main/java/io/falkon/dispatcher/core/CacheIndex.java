package io.falkon.dispatcher.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The dispatcher's index of which executor caches which object (data diffusion), kept loosely
 * coherent with the executors' CACHE_UPDATE reports, like HDFS's NameNode: a hint where data is,
 * not a promise (the executor falls back to the shared store when a hint turns out stale).
 */
final class CacheIndex {
    private static final class Holders {
        long size;
        final List<ExecutorState> executors = new ArrayList<>(2);
    }

    private final Map<String, Holders> objects = new HashMap<>();

    int objects() {
        return objects.size();
    }

    void add(ExecutorState e, String id, long size) {
        if (!e.cached.add(id)) {
            return;
        }
        Holders h = objects.computeIfAbsent(id, k -> new Holders());
        h.size = Math.max(h.size, size);
        h.executors.add(e);
    }

    void remove(ExecutorState e, String id) {
        if (!e.cached.remove(id)) {
            return;
        }
        Holders h = objects.get(id);
        if (h != null) {
            h.executors.remove(e);
            if (h.executors.isEmpty()) {
                objects.remove(id);
            }
        }
    }

    /** Forgets everything {@code e} held (it left, or sent a full summary). */
    void removeAll(ExecutorState e) {
        for (String id : new ArrayList<>(e.cached)) {
            remove(e, id);
        }
    }

    /** The executors that cache {@code id} (do not modify). */
    List<ExecutorState> holders(String id) {
        Holders h = objects.get(id);
        return h == null ? List.of() : h.executors;
    }

    /** Bytes of {@code ids} that {@code e} caches ({@code sizes} as the task declared them, else as reported). */
    long cachedBytes(String[] ids, long[] sizes, ExecutorState e) {
        long bytes = 0;
        for (int i = 0; i < ids.length; i++) {
            if (e.cached.contains(ids[i])) {
                bytes += size(ids[i], sizes[i]);
            }
        }
        return bytes;
    }

    long size(String id, long declared) {
        if (declared > 0) {
            return declared;
        }
        Holders h = objects.get(id);
        return h == null ? 1 : Math.max(1, h.size);
    }

    /**
     * The executor caching the most bytes of the inputs among those {@code eligible} accepts, or
     * {@code null} if none caches any. Ties go to the holder listed first.
     */
    ExecutorState best(String[] ids, long[] sizes, Predicate<ExecutorState> eligible) {
        if (ids.length == 1) {
            for (ExecutorState e : holders(ids[0])) {
                if (eligible.test(e)) {
                    return e;
                }
            }
            return null;
        }
        ExecutorState best = null;
        long bestBytes = 0;
        Set<ExecutorState> seen = new HashSet<>();
        for (String id : ids) {
            for (ExecutorState e : holders(id)) {
                if (seen.add(e) && eligible.test(e)) {
                    long b = cachedBytes(ids, sizes, e);
                    if (b > bestBytes) {
                        best = e;
                        bestBytes = b;
                    }
                }
            }
        }
        return best;
    }

    /** Up to {@code max} holders of {@code id} other than {@code except}, as peer addresses. */
    List<String> peers(String id, ExecutorState except, int max) {
        List<String> out = new ArrayList<>(Math.min(max, 4));
        for (ExecutorState e : holders(id)) {
            if (e != except && e.cachePeer != null && e.alive) {
                out.add(e.cachePeer);
                if (out.size() == max) {
                    break;
                }
            }
        }
        return out;
    }

    Map<String, Integer> replicaCounts() {
        Map<String, Integer> out = new HashMap<>();
        objects.forEach((k, v) -> out.put(k, v.executors.size()));
        return out;
    }
}
