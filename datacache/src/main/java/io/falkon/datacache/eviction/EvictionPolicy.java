package io.falkon.datacache.eviction;

import java.util.function.Predicate;

/**
 * Which cached object goes when room is needed. The cache tells the policy about insertions,
 * accesses and removals, and asks it for a victim among the objects it may evict (pinned objects
 * are not). Implementations need not be thread-safe: the cache calls them under its lock. Each
 * passes {@code EvictionPolicyContract}.
 */
public interface EvictionPolicy {

    String name();

    void inserted(String key);

    void accessed(String key);

    void removed(String key);

    /** The object to evict next among those {@code evictable} accepts, or {@code null} if there is none. */
    String victim(Predicate<String> evictable);
}
