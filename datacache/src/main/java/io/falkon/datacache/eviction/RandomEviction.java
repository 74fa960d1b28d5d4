package io.falkon.datacache.eviction;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Predicate;

/** A victim chosen uniformly at random (seeded, so runs repeat). */
public final class RandomEviction implements EvictionPolicy {
    private final List<String> keys = new ArrayList<>();
    private final Map<String, Integer> index = new HashMap<>();
    private final Random random;

    public RandomEviction(long seed) {
        this.random = new Random(seed);
    }

    @Override
    public String name() {
        return "random";
    }

    @Override
    public void inserted(String key) {
        if (!index.containsKey(key)) {
            index.put(key, keys.size());
            keys.add(key);
        }
    }

    @Override
    public void accessed(String key) {
        // use does not matter
    }

    @Override
    public void removed(String key) {
        Integer at = index.remove(key);
        if (at == null) {
            return;
        }
        String last = keys.remove(keys.size() - 1);
        if (at < keys.size()) {
            keys.set(at, last);
            index.put(last, at);
        }
    }

    @Override
    public String victim(Predicate<String> evictable) {
        int n = keys.size();
        for (int probe = 0; probe < 8 && n > 0; probe++) {
            String k = keys.get(random.nextInt(n));
            if (evictable.test(k)) {
                return k;
            }
        }
        // mostly pinned: look at all of them, from a random start
        int start = n == 0 ? 0 : random.nextInt(n);
        for (int i = 0; i < n; i++) {
            String k = keys.get((start + i) % n);
            if (evictable.test(k)) {
                return k;
            }
        }
        return null;
    }
}
