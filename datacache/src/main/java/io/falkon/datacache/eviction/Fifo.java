package io.falkon.datacache.eviction;

import java.util.LinkedHashSet;
import java.util.function.Predicate;

/** First in, first out: age alone decides, use does not. */
public final class Fifo implements EvictionPolicy {
    private final LinkedHashSet<String> order = new LinkedHashSet<>();

    @Override
    public String name() {
        return "fifo";
    }

    @Override
    public void inserted(String key) {
        order.add(key);
    }

    @Override
    public void accessed(String key) {
        // order of arrival only
    }

    @Override
    public void removed(String key) {
        order.remove(key);
    }

    @Override
    public String victim(Predicate<String> evictable) {
        for (String key : order) {
            if (evictable.test(key)) {
                return key;
            }
        }
        return null;
    }
}
