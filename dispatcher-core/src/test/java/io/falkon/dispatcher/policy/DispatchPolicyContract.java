package io.falkon.dispatcher.policy;

import io.falkon.dispatcher.core.Event;
import io.falkon.dispatcher.core.FakeLink;
import io.falkon.dispatcher.core.SchedulerHarness;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskStatus;
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
        List<List<Message.DispatchedTask>> held = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            free[i] = 1 + rnd.nextInt(4);
            executors.add(h.executor("e" + i, free[i], free[i]));
            held.add(new ArrayList<>());
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
                // the executor finishes a random part of what it holds and keeps the rest across rounds
                List<Message.DispatchedTask> mine = held.get(i);
                mine.addAll(got);
                int done = mine.isEmpty() ? 0 : rnd.nextInt(mine.size() + 1);
                if (done > 0) {
                    List<Message.DispatchedTask> finished = new ArrayList<>(mine.subList(0, done));
                    mine.subList(0, done).clear();
                    h.complete(executors.get(i), finished);
                    free[i] += done;
                }
            }
        }
        assertThat(delivered(client)).extracting(Message.DeliveredResult::clientTaskId)
                .containsExactlyInAnyOrderElementsOf(submitted);
        assertThat(h.scheduler.queuedCount()).isZero();
        assertThat(h.scheduler.runningCount()).isZero();
    }

    @Test
    void aRetryGoesToAnExecutorItHasNotFailedOnWhenThereIsOne() {
        SchedulerHarness h = new SchedulerHarness(policy());
        FakeLink a = h.executor("a", 1, 1);
        FakeLink b = h.executor("b", 1, 0); // busy at first: the first attempt can only go to a
        // a caches the input: a data-aware policy would like to send the retry back there
        h.cached(a, "x");
        FakeLink client = h.client("c");
        h.submit(client, 1, SchedulerHarness.reading("x"));
        List<Message.DispatchedTask> first = dispatched(a);
        assertThat(first).hasSize(1);
        h.finish(a, first, ReliabilityTestSupport.failed(TaskStatus.LAUNCH_FAILED)); // a's credit comes back
        assertThat(dispatched(a)).as("the retry waits for b rather than going back to a").isEmpty();
        h.scheduler.handle(Event.executor(b, new Message.Credit(1)));
        h.scheduler.endBatch();
        List<Message.DispatchedTask> retry = dispatched(b);
        assertThat(retry).hasSize(1);
        assertThat(retry.get(0).attempt()).isEqualTo(1);
        assertThat(dispatched(a)).isEmpty();
        // meanwhile a takes other work
        h.submit(client, 1, SchedulerHarness.reading("x"));
        assertThat(dispatched(a)).hasSize(1);
    }

    @Test
    void aRetryThatFailedEverywhereGoesWhereverThereIsRoom() {
        SchedulerHarness h = new SchedulerHarness(policy());
        FakeLink a = h.executor("a", 1, 1);
        FakeLink client = h.client("c");
        h.submit(client, 1);
        h.finish(a, dispatched(a), ReliabilityTestSupport.failed(TaskStatus.REJECTED));
        assertThat(dispatched(a)).as("a is the only executor: the retry goes back to it").hasSize(1);
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
