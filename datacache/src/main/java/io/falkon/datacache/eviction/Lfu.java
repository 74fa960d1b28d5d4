package io.falkon.datacache.eviction;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Predicate;

/** Least frequently used goes first; among equals, the one that arrived first. */
public final class Lfu implements EvictionPolicy {
    private record Entry(long uses, long arrival, String key) implements Comparable<Entry> {
        @Override
        public int compareTo(Entry o) {
            int c = Long.compare(uses, o.uses);
            return c != 0 ? c : Long.compare(arrival, o.arrival);
        }
    }

    private final Map<String, Entry> entries = new HashMap<>();
    private final TreeSet<Entry> order = new TreeSet<>();
    private long arrivals;

    @Override
    public String name() {
        return "lfu";
    }

    @Override
    public void inserted(String key) {
        removed(key);
        Entry e = new Entry(1, arrivals++, key);
        entries.put(key, e);
        order.add(e);
    }

    @Override
    public void accessed(String key) {
        Entry e = entries.get(key);
        if (e != null) {
            order.remove(e);
            Entry used = new Entry(e.uses + 1, e.arrival, key);
            entries.put(key, used);
            order.add(used);
        }
    }

    @Override
    public void removed(String key) {
        Entry e = entries.remove(key);
        if (e != null) {
            order.remove(e);
        }
    }

    @Override
    public String victim(Predicate<String> evictable) {
        for (Entry e : order) {
            if (evictable.test(e.key)) {
                return e.key;
            }
        }
        return null;
    }
}
