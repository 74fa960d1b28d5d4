package io.falkon.dispatcher.policy;

import io.falkon.dispatcher.core.FakeLink;
import io.falkon.dispatcher.core.SchedulerHarness;
import io.falkon.protocol.Message;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static io.falkon.dispatcher.core.SchedulerHarness.delivered;
import static io.falkon.dispatcher.core.SchedulerHarness.dispatched;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every {@link DispatchPolicy} must do, run against each implementation through the real
 * scheduler: never over-commit an executor, dispatch each task once, and finish a workload.
 */
public abstract class DispatchPolicyContract {

    protected abstract DispatchPolicy policy();

    @Test
    void neverSendsAnExecutorMoreThanItsCreditsAndDispatchesEachTaskOnce() {
        SchedulerHarness h = new SchedulerHarness(policy());
        Random rnd = new Random(42);
        List<FakeLink> executors = new ArrayList<>();
        int[] free = new int[5];
        for (int i = 0; i < 5; i++) {
            free[i] = 1 + rnd.nextInt(4);
            executors.add(h.executor("e" + i, free[i], free[i]));
        }
        FakeLink client = h.client("c");
        List<Long> submitted = h.submit(client, 500);
        Set<Long> seenTaskIds = new HashSet<>();
        int guard = 0;
        while (delivered(client).size() < submitted.size() && guard++ < 10_000) {
            for (int i = 0; i < executors.size(); i++) {
                List<Message.DispatchedTask> got = dispatched(executors.get(i));
                assertThat(got.size()).as("tasks sent to e%d with %d credits", i, free[i]).isLessThanOrEqualTo(free[i]);
                free[i] -= got.size();
                for (Message.DispatchedTask t : got) {
                    assertThat(seenTaskIds.add(t.taskId())).as("task %d dispatched twice", t.taskId()).isTrue();
                }
                // finish a random part of what it holds
                int done = got.isEmpty() ? 0 : 1 + rnd.nextInt(got.size());
                h.complete(executors.get(i), got.subList(0, done));
                free[i] += done;
                if (done < got.size()) {
                    h.complete(executors.get(i), got.subList(done, got.size()));
                    free[i] += got.size() - done;
                }
            }
        }
        assertThat(delivered(client)).extracting(Message.DeliveredResult::clientTaskId)
                .containsExactlyInAnyOrderElementsOf(submitted);
        assertThat(h.scheduler.queuedCount()).isZero();
        assertThat(h.scheduler.runningCount()).isZero();
    }

    @Test
    void doesNothingWithoutCredits() {
        SchedulerHarness h = new SchedulerHarness(policy());
        FakeLink e = h.executor("e", 4, 0);
        FakeLink client = h.client("c");
        h.submit(client, 10);
        assertThat(dispatched(e)).isEmpty();
        assertThat(h.scheduler.queuedCount()).isEqualTo(10);
    }

    @Test
    void usesEveryFreeSlotWhenThereIsEnoughWork() {
        SchedulerHarness h = new SchedulerHarness(policy());
        FakeLink a = h.executor("a", 3, 3);
        FakeLink b = h.executor("b", 5, 5);
        FakeLink client = h.client("c");
        h.submit(client, 20);
        assertThat(dispatched(a).size() + dispatched(b).size()).isEqualTo(8);
        assertThat(h.scheduler.queuedCount()).isEqualTo(12);
    }

    @Test
    void tasksWithInputsThatNobodyCachesStillRunEverywhere() {
        SchedulerHarness h = new SchedulerHarness(policy());
        FakeLink a = h.executor("a", 2, 2);
        FakeLink b = h.executor("b", 2, 2);
        FakeLink client = h.client("c");
        h.submit(client, 4, SchedulerHarness.reading("x"));
        assertThat(dispatched(a).size() + dispatched(b).size()).isEqualTo(4);
    }

    @Test
    void hasAName() {
        assertThat(policy().name()).isNotBlank();
        assertThat(DispatchPolicies.byName(policy().name()).name()).isEqualTo(policy().name());
    }
}
