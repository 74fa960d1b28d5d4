package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.dispatcher.policy.MaxComputeUtil;
import io.falkon.protocol.Message;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Multicast in the core: an object most executors' queued tasks read goes to every executor along a
 * tree, the store read once, each holder serving at most {@link Multicast#FAN_OUT} at a time. The
 * harness checks the scheduler's invariants after every event.
 */
class MulticastTest {
    private final SchedulerHarness h = new SchedulerHarness(new MaxComputeUtil());

    /** REPLICATE orders each executor got since the last call: executor index to the peers it was told to try. */
    private static Map<Integer, List<String>> orders(List<FakeLink> executors) {
        Map<Integer, List<String>> out = new java.util.TreeMap<>();
        for (int i = 0; i < executors.size(); i++) {
            for (Message m : executors.get(i).drain()) {
                if (m instanceof Message.Replicate r) {
                    assertThat(r.objects()).singleElement().satisfies(o -> {
                        assertThat(o.id()).isEqualTo("db");
                        assertThat(o.source()).as("as the tasks declare it").isEqualTo("store/db");
                        assertThat(o.size()).isEqualTo(1 << 20);
                    });
                    assertThat(out.put(i, r.objects().get(0).peers())).as("one order per executor").isNull();
                }
            }
        }
        return out;
    }

    private List<FakeLink> executors(int n) {
        List<FakeLink> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(h.executor("e" + i, 1, 0)); // no credit: the tasks stay queued
        }
        return out;
    }

    private void arrive(FakeLink e) {
        h.cached(e, "db");
        h.scheduler.endBatch();
    }

    @Test
    void anObjectMostQueuedTasksReadReachesEveryExecutorAlongATreeWithOneStoreRead() {
        List<FakeLink> ex = executors(7);
        FakeLink c = h.client("c");
        h.submit(c, 7, SchedulerHarness.reading("db"));
        Map<Integer, List<String>> first = orders(ex);
        assertThat(first).as("one executor reads the store").hasSize(1);
        assertThat(first.values().iterator().next()).isEmpty();
        int root = first.keySet().iterator().next();

        Set<Integer> holders = new HashSet<>(Set.of(root));
        arrive(ex.get(root));
        int rounds = 1;
        while (holders.size() < ex.size()) {
            Map<Integer, List<String>> next = orders(ex);
            assertThat(next).as("round %d sends to executors that lack it", rounds).isNotEmpty()
                    .allSatisfy((i, peers) -> {
                        assertThat(holders).doesNotContain(i);
                        assertThat(peers).as("from one holder").hasSize(1);
                    });
            Map<String, Long> perSender = new java.util.HashMap<>();
            next.values().forEach(p -> perSender.merge(p.get(0), 1L, Long::sum));
            assertThat(perSender.values()).as("fan-out").allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(Multicast.FAN_OUT));
            for (int i : next.keySet()) {
                holders.add(i);
                arrive(ex.get(i));
            }
            rounds++;
        }
        assertThat(rounds).as("1, then 2, then 4 more: three rounds of transfers for 7").isEqualTo(3);
        assertThat(orders(ex)).as("done: every executor holds it").isEmpty();
    }

    @Test
    void aReceiverThatLeavesIsNotWaitedForAndItsSenderServesOthers() {
        List<FakeLink> ex = executors(4);
        FakeLink c = h.client("c");
        h.submit(c, 4, SchedulerHarness.reading("db"));
        int root = orders(ex).keySet().iterator().next();
        arrive(ex.get(root));
        Map<Integer, List<String>> two = orders(ex);
        assertThat(two).hasSize(2);
        int gone = two.keySet().iterator().next();
        h.scheduler.handle(Event.gone(ex.get(gone), true));
        h.scheduler.endBatch();
        Map<Integer, List<String>> then = orders(ex);
        assertThat(then).as("the root serves the last executor in its place").hasSize(1);
        assertThat(then.keySet()).doesNotContain(gone, root);
    }

    @Test
    void fewQueuedReadersFewExecutorsOrFirstAvailableMulticastNothing() {
        List<FakeLink> ex = executors(4);
        FakeLink c = h.client("c");
        h.submit(c, 3, SchedulerHarness.reading("db"));
        assertThat(orders(ex)).as("3 readers for 4 executors").isEmpty();

        SchedulerHarness two = new SchedulerHarness(new MaxComputeUtil());
        FakeLink a = two.executor("a", 1, 0);
        FakeLink b = two.executor("b", 1, 0);
        two.submit(two.client("c"), 10, SchedulerHarness.reading("db"));
        assertThat(a.sent(Message.Replicate.class)).isEmpty();
        assertThat(b.sent(Message.Replicate.class)).as("a tree needs three executors").isEmpty();

        SchedulerHarness fa = new SchedulerHarness(new FirstAvailable());
        List<FakeLink> faEx = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            faEx.add(fa.executor("f" + i, 1, 0));
        }
        fa.submit(fa.client("c"), 10, SchedulerHarness.reading("db"));
        assertThat(faEx).allSatisfy(e -> assertThat(e.sent(Message.Replicate.class)).as("no data diffusion").isEmpty());
    }
}
