package io.falkon.datacache.eviction;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PoliciesTest {

    @Nested
    class LruTest extends EvictionPolicyContract {
        @Override
        EvictionPolicy policy() {
            return new Lru();
        }

        @Test
        void theLeastRecentlyUsedGoesFirst() {
            EvictionPolicy p = policy();
            p.inserted("a");
            p.inserted("b");
            p.inserted("c");
            p.accessed("a");
            assertThat(p.victim(k -> true)).isEqualTo("b");
        }
    }

    @Nested
    class FifoTest extends EvictionPolicyContract {
        @Override
        EvictionPolicy policy() {
            return new Fifo();
        }

        @Test
        void theOldestGoesFirstHoweverOftenItIsUsed() {
            EvictionPolicy p = policy();
            p.inserted("a");
            p.inserted("b");
            p.accessed("a");
            p.accessed("a");
            assertThat(p.victim(k -> true)).isEqualTo("a");
        }
    }

    @Nested
    class LfuTest extends EvictionPolicyContract {
        @Override
        EvictionPolicy policy() {
            return new Lfu();
        }

        @Test
        void theLeastUsedGoesFirstAndAmongEqualsTheOldest() {
            EvictionPolicy p = policy();
            p.inserted("a");
            p.inserted("b");
            p.inserted("c");
            p.accessed("a");
            p.accessed("c");
            assertThat(p.victim(k -> true)).isEqualTo("b");
            p.removed("b");
            assertThat(p.victim(k -> true)).isEqualTo("a");
        }
    }

    @Nested
    class RandomTest extends EvictionPolicyContract {
        @Override
        EvictionPolicy policy() {
            return new RandomEviction(1);
        }

        @Test
        void victimsAreSpreadAndRepeatableForASeed() {
            Set<String> seen = new HashSet<>();
            for (int round = 0; round < 50; round++) {
                EvictionPolicy p = new RandomEviction(round);
                for (int i = 0; i < 10; i++) {
                    p.inserted("k" + i);
                }
                seen.add(p.victim(k -> true));
            }
            assertThat(seen.size()).isGreaterThan(5);
            EvictionPolicy a = new RandomEviction(9);
            EvictionPolicy b = new RandomEviction(9);
            for (int i = 0; i < 10; i++) {
                a.inserted("k" + i);
                b.inserted("k" + i);
            }
            assertThat(a.victim(k -> true)).isEqualTo(b.victim(k -> true));
        }
    }

    @Test
    void unknownNamesAreRefused() {
        assertThatThrownBy(() -> EvictionPolicies.byName("mru")).hasMessageContaining("unknown eviction policy 'mru'")
                .hasMessageContaining("lru, lfu, fifo, random");
    }
}
