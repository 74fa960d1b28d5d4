package io.falkon.datacache.eviction;

import java.util.LinkedHashMap;
import java.util.function.Predicate;

/** Least recently used goes first (the default). */
public final class Lru implements EvictionPolicy {
    private final LinkedHashMap<String, Boolean> order = new LinkedHashMap<>(64, 0.75f, true);

    @Override
    public String name() {
        return "lru";
    }

    @Override
    public void inserted(String key) {
        order.put(key, Boolean.TRUE);
    }

    @Override
    public void accessed(String key) {
        order.get(key);
    }

    @Override
    public void removed(String key) {
        order.remove(key);
    }

    @Override
    public String victim(Predicate<String> evictable) {
        for (String key : order.keySet()) {
            if (evictable.test(key)) {
                return key;
            }
        }
        return null;
    }
}
