package io.falkon.dispatcher.policy;

import io.falkon.dispatcher.core.Event;
import io.falkon.dispatcher.core.FakeLink;
import io.falkon.dispatcher.core.SchedulerConfig;
import io.falkon.dispatcher.core.SchedulerHarness;
import io.falkon.dispatcher.core.Journal;
import io.falkon.protocol.DataCodec;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.ExtTags;
import io.falkon.protocol.Message;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static io.falkon.dispatcher.core.SchedulerHarness.dispatched;
import static io.falkon.dispatcher.core.SchedulerHarness.reading;
import static org.assertj.core.api.Assertions.assertThat;

/** The papers' definitions of the four policies, one scenario each, and the contract for every one. */
class DataAwarePoliciesTest {

    @Nested
    class MchContract extends DispatchPolicyContract {
        @Override
        protected DispatchPolicy policy() {
            return new MaxCacheHit();
        }
    }

    @Nested
    class McuContract extends DispatchPolicyContract {
        @Override
        protected DispatchPolicy policy() {
            return new MaxComputeUtil();
        }
    }

    @Nested
    class GccContract extends DispatchPolicyContract {
        @Override
        protected DispatchPolicy policy() {
            return new GoodCacheCompute();
        }
    }

    /** a caches x; b caches nothing; a is busy, b is free; one task reads x. */
    static SchedulerHarness busyHolder(DispatchPolicy policy, FakeLink[] out) {
        SchedulerHarness h = new SchedulerHarness(policy);
        FakeLink a = h.executor("a", 1, 0);
        FakeLink b = h.executor("b", 1, 1);
        h.cached(a, "x");
        out[0] = a;
        out[1] = b;
        return h;
    }

    @Test
    void maxCacheHitWaitsForTheBusyExecutorThatHasTheData() {
        FakeLink[] ex = new FakeLink[2];
        SchedulerHarness h = busyHolder(new MaxCacheHit(), ex);
        FakeLink client = h.client("c");
        h.submit(client, 1, reading("x"));
        assertThat(dispatched(ex[1])).as("the free executor without the data").isEmpty();
        h.scheduler.handle(Event.executor(ex[0], new Message.Credit(1)));
        h.scheduler.endBatch();
        assertThat(dispatched(ex[0])).hasSize(1);
    }

    @Test
    void maxCacheHitLetsOtherTasksInTheWindowGoAhead() {
        FakeLink[] ex = new FakeLink[2];
        SchedulerHarness h = busyHolder(new MaxCacheHit(), ex);
        h.cached(ex[1], "y");
        FakeLink client = h.client("c");
        h.submit(client, 1, reading("x")); // waits for a
        h.submit(client, 1, reading("y")); // b has it
        List<Message.DispatchedTask> toB = dispatched(ex[1]);
        assertThat(toB).hasSize(1);
        assertThat(h.scheduler.queuedCount()).isEqualTo(1);
    }

    @Test
    void maxComputeUtilUsesTheFreeExecutorWhenTheHolderIsBusyAndPrefersTheHolderWhenFree() {
        FakeLink[] ex = new FakeLink[2];
        SchedulerHarness h = busyHolder(new MaxComputeUtil(), ex);
        FakeLink client = h.client("c");
        h.submit(client, 1, reading("x"));
        assertThat(dispatched(ex[1])).as("kept busy, data moves").hasSize(1);
        h.scheduler.handle(Event.executor(ex[0], new Message.Credit(1)));
        h.scheduler.handle(Event.executor(ex[1], new Message.Credit(1)));
        h.scheduler.endBatch();
        h.submit(client, 1, reading("x"));
        assertThat(dispatched(ex[0])).as("both free: the one caching x").hasSize(1);
        assertThat(dispatched(ex[1])).isEmpty();
    }

    @Test
    void goodCacheComputeIsMaxComputeUtilBelowTheThresholdAndMaxCacheHitAtOrAboveIt() {
        // utilization 0 of 10 slots: below 0.9, so the busy holder is not waited for
        SchedulerHarness low = new SchedulerHarness(new GoodCacheCompute(0.9));
        FakeLink holder = low.executor("holder", 1, 0);
        FakeLink free = low.executor("free", 9, 9);
        low.cached(holder, "x");
        FakeLink c1 = low.client("c");
        low.submit(c1, 1, reading("x"));
        assertThat(dispatched(free)).hasSize(1);

        // utilization counts the slot being filled: 7 busy + 1 = 0.8 is MCU, 8 busy + 1 = 0.9 is MCH
        SchedulerHarness high = new SchedulerHarness(new GoodCacheCompute(0.9));
        FakeLink h2 = high.executor("holder", 1, 0);
        FakeLink f2 = high.executor("free", 9, 9);
        high.cached(h2, "x");
        FakeLink c2 = high.client("c");
        high.submit(c2, 7, reading("other-" + 0)); // nobody caches these: they fill free's slots
        assertThat(dispatched(f2)).hasSize(7);
        high.submit(c2, 1, reading("x"));
        assertThat(dispatched(f2)).as("(7 + 1)/10 < 0.9: still MCU").hasSize(1);
        FakeLink c3 = high.client("d");
        high.submit(c3, 1, reading("x"));
        assertThat(dispatched(f2)).as("(8 + 1)/10 = 0.9: MCH waits for the holder").isEmpty();
        assertThat(high.scheduler.queuedCount()).isEqualTo(1);

        // and on a small cluster GCC can reach the threshold at all: 2 slots, 1 busy
        SchedulerHarness small = new SchedulerHarness(new GoodCacheCompute(0.9));
        FakeLink h3 = small.executor("holder", 1, 1);
        FakeLink f3 = small.executor("free", 1, 1);
        small.cached(h3, "x");
        FakeLink c4 = small.client("e");
        small.submit(c4, 1, reading("x"));
        assertThat(dispatched(h3)).as("the holder takes the first").hasSize(1);
        small.submit(c4, 1, reading("x"));
        assertThat(dispatched(f3)).as("(1 + 1)/2 >= 0.9: MCH waits for the busy holder").isEmpty();
    }

    @Test
    void aStaleIndexEntryIsCorrectedBeforeTheDecision() {
        FakeLink[] ex = new FakeLink[2];
        SchedulerHarness h = busyHolder(new MaxCacheHit(), ex);
        FakeLink client = h.client("c");
        h.submit(client, 1, reading("x"));
        assertThat(dispatched(ex[1])).isEmpty();
        h.evicted(ex[0], "x"); // a no longer has it: nobody does, so any free executor will do
        h.scheduler.handle(Event.executor(ex[1], new Message.Credit(1)));
        h.scheduler.endBatch();
        assertThat(dispatched(ex[1])).hasSize(1);
    }

    @Test
    void dataAwareDispatchesCarryHintsAndFirstAvailableTellsExecutorsToReadTheStore() {
        SchedulerHarness h = new SchedulerHarness(new MaxComputeUtil());
        FakeLink a = h.executor("a", 1, 0);
        FakeLink b = h.executor("b", 1, 1);
        h.cached(a, "x");
        FakeLink client = h.client("c");
        h.submit(client, 1, reading("x", "y"));
        Message.DispatchedTask t = dispatched(b).get(0);
        assertThat(t.ext()).hasSize(1);
        ExtField hints = t.ext().get(0);
        assertThat(hints.tag()).isEqualTo(ExtTags.HINTS);
        Map<String, List<String>> decoded = DataCodec.decodeHints(hints.value());
        assertThat(decoded).containsOnlyKeys("x");
        assertThat(decoded.get("x")).hasSize(1).allMatch(p -> p.startsWith("127.0.0.1:"));

        SchedulerHarness fa = new SchedulerHarness(new FirstAvailable());
        FakeLink e = fa.executor("e", 1, 1);
        fa.cached(e, "x");
        FakeLink c = fa.client("c");
        fa.submit(c, 1, reading("x"));
        assertThat(dispatched(e).get(0).ext()).extracting(ExtField::tag).containsExactly(ExtTags.BYPASS_CACHE);
    }

    @Test
    void maxCacheHitLooksOnlyAsFarAsTheWindow() {
        SchedulerHarness h = new SchedulerHarness(new MaxCacheHit(),
                SchedulerConfig.defaults().withWindowSize(2), Journal.NONE);
        FakeLink a = h.executor("a", 1, 0);
        FakeLink b = h.executor("b", 1, 1);
        h.cached(a, "x");
        h.cached(b, "y");
        FakeLink client = h.client("c");
        h.submit(client, 2, reading("x")); // both wait for a, and fill the window
        h.submit(client, 1, reading("y")); // b would take it, but it is third
        assertThat(dispatched(b)).isEmpty();
        h.scheduler.handle(Event.executor(a, new Message.Credit(1)));
        h.scheduler.endBatch(); // one x runs on a: the window moves on to the y task
        assertThat(dispatched(a)).hasSize(1);
        assertThat(dispatched(b)).hasSize(1);
    }

    @Test
    void aLeavingExecutorTakesItsIndexEntriesWithIt() {
        SchedulerHarness h = new SchedulerHarness(new MaxCacheHit());
        FakeLink a = h.executor("a", 1, 0);
        h.cached(a, "x", "y");
        assertThat(h.scheduler.snapshot().indexedObjects()).isEqualTo(2);
        h.scheduler.handle(Event.gone(a, true));
        assertThat(h.scheduler.snapshot().indexedObjects()).isZero();
        FakeLink b = h.executor("b", 1, 1);
        FakeLink client = h.client("c");
        h.submit(client, 1, reading("x"));
        assertThat(dispatched(b)).hasSize(1);
    }

    @Test
    void policiesAreFoundByLongAndShortName() {
        assertThat(DispatchPolicies.byName("gcc", 0.8)).isInstanceOfSatisfying(GoodCacheCompute.class,
                g -> assertThat(g.threshold()).isEqualTo(0.8));
        assertThat(DispatchPolicies.byName("max-cache-hit")).isInstanceOf(MaxCacheHit.class);
        assertThat(DispatchPolicies.byName("MCU")).isInstanceOf(MaxComputeUtil.class);
    }

    @Test
    void goodCacheComputeCountsTheSlotsATaskOfSeveralCoresKeepsBusy() {
        SchedulerHarness h = new SchedulerHarness(new GoodCacheCompute(0.7));
        FakeLink a = h.executor("a", 4, 4);
        FakeLink b = h.executor("b", 1, 0); // busy, but it caches x
        h.cached(b, "x");
        FakeLink client = h.client("c");
        h.submitAll(client, List.of(io.falkon.protocol.TaskSpec.builder("/bin/true").resources(3, 0).build()));
        assertThat(dispatched(a)).hasSize(1);
        // 3 of 5 slots busy: one more makes 0.8, over the threshold, so the task waits for the cache
        // hit on b (counting tasks, 1 running of 5 slots, it would go to a at once)
        h.submit(client, 1, reading("x"));
        assertThat(dispatched(a)).as("not sent where its data is not while utilization is high").isEmpty();
        h.scheduler.handle(Event.executor(b, new Message.Credit(1)));
        h.scheduler.endBatch();
        assertThat(dispatched(b)).hasSize(1);
    }
}
