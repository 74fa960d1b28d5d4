package io.falkon.dispatcher.core;

import java.util.Map;
import java.util.TreeMap;

/**
 * A set of client task ids kept as disjoint ranges: the ids an instance has accepted. Clients number
 * their tasks 0, 1, 2, … so the set is usually one range, whatever the number of tasks; ids chosen
 * freely (WS callers may) cost one range each. It makes a re-sent bundle recognisable (idempotent
 * submission) and a reused id refusable.
 */
final class IdSet {
    /** First id of each range → its last id (inclusive). */
    private final TreeMap<Long, Long> ranges = new TreeMap<>();
    private long highest = -1;

    boolean contains(long id) {
        Map.Entry<Long, Long> r = ranges.floorEntry(id);
        return r != null && id <= r.getValue();
    }

    /** Adds {@code id}; false if it was there already. */
    boolean add(long id) {
        Map.Entry<Long, Long> below = ranges.floorEntry(id);
        if (below != null && id <= below.getValue()) {
            return false;
        }
        highest = Math.max(highest, id);
        boolean joinsBelow = below != null && below.getValue() == id - 1 && id != Long.MIN_VALUE;
        Long aboveEnd = id == Long.MAX_VALUE ? null : ranges.get(id + 1);
        if (joinsBelow && aboveEnd != null) {
            ranges.put(below.getKey(), aboveEnd);
            ranges.remove(id + 1);
        } else if (joinsBelow) {
            ranges.put(below.getKey(), id);
        } else if (aboveEnd != null) {
            ranges.remove(id + 1);
            ranges.put(id, aboveEnd);
        } else {
            ranges.put(id, id);
        }
        return true;
    }

    /** The highest id added, -1 for none. */
    long highest() {
        return highest;
    }

    int ranges() {
        return ranges.size();
    }

    /** The ranges as {@code [from0, to0, from1, to1, …]}, for the journal. */
    long[] toArray() {
        long[] out = new long[2 * ranges.size()];
        int i = 0;
        for (Map.Entry<Long, Long> r : ranges.entrySet()) {
            out[i++] = r.getKey();
            out[i++] = r.getValue();
        }
        return out;
    }

    /** Adds every id of {@code [from0, to0, …]} (ranges from {@link #toArray}). */
    void addAll(long[] pairs) {
        for (int i = 0; i + 1 < pairs.length; i += 2) {
            addRange(pairs[i], pairs[i + 1]);
        }
    }

    private void addRange(long from, long to) {
        if (from > to) {
            return;
        }
        // merge with whatever it overlaps or touches
        Map.Entry<Long, Long> below = ranges.floorEntry(from);
        if (below != null && below.getValue() >= from - 1) {
            from = below.getKey();
            to = Math.max(to, below.getValue());
        }
        Map.Entry<Long, Long> next = ranges.ceilingEntry(from);
        while (next != null && next.getKey() <= to + 1) {
            to = Math.max(to, next.getValue());
            ranges.remove(next.getKey());
            next = ranges.ceilingEntry(from);
        }
        ranges.put(from, to);
        highest = Math.max(highest, to);
    }
}
