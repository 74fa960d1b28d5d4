package io.falkon.datacache.eviction;

import java.util.List;

/** The eviction policies by name. */
public final class EvictionPolicies {
    private EvictionPolicies() {
    }

    public static List<String> names() {
        return List.of("lru", "lfu", "fifo", "random");
    }

    public static EvictionPolicy byName(String name) {
        return switch (name.toLowerCase()) {
            case "lru" -> new Lru();
            case "lfu" -> new Lfu();
            case "fifo" -> new Fifo();
            case "random" -> new RandomEviction(42);
            default -> throw new IllegalArgumentException("unknown eviction policy '" + name + "' (known: "
                    + String.join(", ", names()) + ")");
        };
    }
}
