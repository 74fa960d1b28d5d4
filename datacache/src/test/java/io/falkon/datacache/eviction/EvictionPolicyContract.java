package io.falkon.datacache.eviction;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** What every eviction policy does, run against each one. */
abstract class EvictionPolicyContract {

    abstract EvictionPolicy policy();

    @Test
    void onlyEvictableKeysAreVictims() {
        EvictionPolicy p = policy();
        for (String k : List.of("a", "b", "c", "d")) {
            p.inserted(k);
        }
        Set<String> pinned = Set.of("a", "c");
        for (int i = 0; i < 20; i++) {
            assertThat(p.victim(k -> !pinned.contains(k))).isIn("b", "d");
        }
        assertThat(p.victim(k -> false)).isNull();
    }

    @Test
    void removedKeysAreNeverVictimsAndEveryKeyCanGo() {
        EvictionPolicy p = policy();
        Set<String> keys = new HashSet<>();
        for (int i = 0; i < 100; i++) {
            p.inserted("k" + i);
            keys.add("k" + i);
        }
        p.removed("k7");
        keys.remove("k7");
        Set<String> evicted = new HashSet<>();
        String v;
        while ((v = p.victim(k -> true)) != null) {
            assertThat(v).isNotEqualTo("k7");
            assertThat(evicted.add(v)).as("evicted twice: " + v).isTrue();
            p.removed(v);
        }
        assertThat(evicted).isEqualTo(keys);
    }

    @Test
    void anEmptyPolicyHasNoVictimAndIgnoresUnknownKeys() {
        EvictionPolicy p = policy();
        p.accessed("ghost");
        p.removed("ghost");
        assertThat(p.victim(k -> true)).isNull();
        assertThat(EvictionPolicies.byName(p.name()).name()).isEqualTo(p.name());
    }
}
