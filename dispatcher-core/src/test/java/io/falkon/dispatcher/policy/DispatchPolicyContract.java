package io.falkon.dispatcher.policy;

import io.falkon.dispatcher.core.Event;
import io.falkon.dispatcher.core.FakeLink;
import io.falkon.dispatcher.core.SchedulerHarness;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskSpecCodec;
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
                free[i] += completeSome(h, executors.get(i), mine, rnd);
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

    // ---- tasks of several cores, stated memory and disk (issue 36) -----------------------------

    private static TaskSpec sized(String name, int cores, long memoryMiB) {
        return sized(name, cores, memoryMiB, 0);
    }

    private static TaskSpec sized(String name, int cores, long memoryMiB, long diskMiB) {
        return TaskSpec.builder("/bin/true").name(name).resources(cores, memoryMiB).disk(diskMiB).build();
    }

    @Test
    void neverGivesAnExecutorMoreCoresMemoryOrDiskThanItHasAndFinishesAMixedWorkload() {
        SchedulerHarness h = new SchedulerHarness(policy());
        Random rnd = new Random(7);
        int[] slots = {2, 3, 4};
        long[] memory = {1000, 4000, 2000};
        long[] disk = {500, 3000, 1200};
        List<FakeLink> executors = new ArrayList<>();
        for (int i = 0; i < slots.length; i++) {
            executors.add(h.executor("e" + i, slots[i], slots[i], memory[i], disk[i]));
        }
        FakeLink client = h.client("c");
        List<TaskSpec> specs = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            int cores = 1 + rnd.nextInt(4); // 4 fits e2 alone
            long mem = rnd.nextInt(3) == 0 ? 0 : 100L * (1 + rnd.nextInt(15)); // up to 1,500: not e0
            long scratch = rnd.nextInt(2) == 0 ? 0 : 100L * (1 + rnd.nextInt(10)); // up to 1,000: not e0
            specs.add(sized("t" + i, cores, mem, scratch));
        }
        runMixed(h, executors, client, specs, rnd, (mine, i) -> {
            int cores = mine.stream().mapToInt(SchedulerHarness::coresOf).sum();
            long mem = mine.stream().mapToLong(t -> TaskSpecCodec.scan(t.spec()).memoryMiB()).sum();
            assertThat(cores).as("cores held by e%d of %d slots", i, slots[i]).isLessThanOrEqualTo(slots[i]);
            assertThat(mem).as("MiB held by e%d advertising %d", i, memory[i]).isLessThanOrEqualTo(memory[i]);
            long used = mine.stream().mapToLong(t -> TaskSpecCodec.scan(t.spec()).diskMiB()).sum();
            assertThat(used).as("disk MiB held by e%d advertising %d", i, disk[i]).isLessThanOrEqualTo(disk[i]);
        });
    }

    @Test
    void aTaskOfSeveralCoresIsNotStarvedBySmallerOnesBehindIt() {
        SchedulerHarness h = new SchedulerHarness(policy());
        FakeLink e = h.executor("e", 2, 2);
        FakeLink client = h.client("c");
        h.submitAll(client, List.of(sized("a", 1, 0), sized("b", 1, 0)));
        List<Message.DispatchedTask> running = dispatched(e);
        List<TaskSpec> rest = new ArrayList<>(List.of(sized("big", 2, 0)));
        for (int i = 0; i < 6; i++) {
            rest.add(sized("s" + i, 1, 0));
        }
        h.submitAll(client, rest);
        h.complete(e, running.subList(0, 1));
        assertThat(dispatched(e)).as("one slot free: kept for 'big', not given to a task behind it").isEmpty();
        h.complete(e, running.subList(1, 2));
        List<Message.DispatchedTask> next = dispatched(e);
        assertThat(next).extracting(SchedulerHarness::nameOf).containsExactly("big");
        h.complete(e, next);
        assertThat(dispatched(e)).extracting(SchedulerHarness::nameOf).containsExactly("s0", "s1");
    }

    @Test
    void anExecutorTooSmallForTheHeadKeepsRunningTheTasksBehindIt() {
        SchedulerHarness h = new SchedulerHarness(policy());
        FakeLink small = h.executor("small", 1, 1);
        FakeLink big = h.executor("big", 2, 0); // busy for now
        FakeLink client = h.client("c");
        h.submitAll(client, List.of(sized("wide", 2, 0), sized("s0", 1, 0), sized("s1", 1, 0)));
        assertThat(dispatched(small)).extracting(SchedulerHarness::nameOf).containsExactly("s0");
        h.scheduler.handle(Event.executor(big, new Message.Credit(2)));
        h.scheduler.endBatch();
        assertThat(dispatched(big)).extracting(SchedulerHarness::nameOf).containsExactly("wide");
    }

    @Test
    void statedMemoryLimitsHowManyTasksShareAnExecutor() {
        SchedulerHarness h = new SchedulerHarness(policy());
        FakeLink e = h.executor("e", 4, 4, 1000);
        FakeLink client = h.client("c");
        h.submitAll(client, List.of(sized("m0", 1, 600), sized("m1", 1, 600), sized("free", 1, 0)));
        List<Message.DispatchedTask> first = dispatched(e);
        assertThat(first).extracting(SchedulerHarness::nameOf).contains("m0").doesNotContain("m1");
        h.complete(e, first.stream().filter(t -> SchedulerHarness.nameOf(t).equals("m0")).toList());
        assertThat(dispatched(e)).extracting(SchedulerHarness::nameOf).contains("m1");
    }

    @Test
    void aTaskNoExecutorCouldEverHoldIsRefusedNamingWhatItNeeds() {
        SchedulerHarness h = new SchedulerHarness(policy());
        FakeLink client = h.client("c");
        // before any executor registers, it waits: a provisioner may be starting one
        h.submitAll(client, List.of(sized("huge", 3, 0), sized("fat", 1, 5000), sized("wide", 1, 0, 900),
                sized("ok", 2, 0, 800)));
        assertThat(delivered(client)).isEmpty();
        FakeLink e = h.executor("e", 2, 2, 4096, 800);
        assertThat(dispatched(e)).extracting(SchedulerHarness::nameOf).containsExactly("ok");
        List<Message.DeliveredResult> refused = delivered(client);
        assertThat(refused).hasSize(3).allSatisfy(r -> {
            assertThat(r.execution().status()).isEqualTo(TaskStatus.REJECTED);
            assertThat(r.execution().permanent()).isTrue();
        });
        assertThat(refused.get(0).execution().detail()).contains("needs 3 cores")
                .contains("at most 2 slots, 4096 MiB of memory, 800 MiB of disk");
        assertThat(refused.get(1).execution().detail()).contains("needs 1 core, 5000 MiB of memory of one");
        assertThat(refused.get(2).execution().detail()).contains("needs 1 core, 900 MiB of disk of one");
        // once executors are known, a task too large is refused as soon as it is submitted
        h.submitAll(client, List.of(sized("later", 8, 0)));
        assertThat(delivered(client)).hasSize(4);
        h.scheduler.checkInvariants();
    }

    // ---- named resources: GPUs and the like (issue 57) ------------------------------------------

    private static TaskSpec named(String name, int gpus, int licenses) {
        java.util.Map<String, Integer> r = new java.util.HashMap<>();
        r.put("gpus", gpus);
        r.put("license", licenses);
        return TaskSpec.builder("/bin/true").name(name).namedResources(r).build();
    }

    @Test
    void neverGivesAnExecutorMoreOfANamedResourceThanItOffersAndFinishesAMixedWorkload() {
        SchedulerHarness h = new SchedulerHarness(policy());
        Random rnd = new Random(57);
        String[] offers = {"gpus=4,license=1", "gpus=2", null};
        long[][] limits = {{4, 1}, {2, 0}, {0, 0}};
        List<FakeLink> executors = new ArrayList<>();
        for (int i = 0; i < offers.length; i++) {
            executors.add(offers[i] == null ? h.executor("e" + i, 4, 4) : h.executor("e" + i, 8, 8, offers[i]));
        }
        FakeLink client = h.client("c");
        List<TaskSpec> specs = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            int gpus = rnd.nextInt(4); // 3 fits e0 alone
            specs.add(named("t" + i, gpus, gpus > 0 && rnd.nextInt(4) == 0 ? 1 : 0));
        }
        runMixed(h, executors, client, specs, rnd, (mine, i) -> {
            long gpus = 0;
            long licenses = 0;
            for (Message.DispatchedTask t : mine) {
                io.falkon.protocol.NamedResources r = TaskSpecCodec.scan(t.spec()).named();
                gpus += r == null ? 0 : r.amount("gpus");
                licenses += r == null ? 0 : r.amount("license");
            }
            assertThat(gpus).as("GPUs held on e%d", i).isLessThanOrEqualTo(limits[i][0]);
            assertThat(licenses).as("licences held on e%d", i).isLessThanOrEqualTo(limits[i][1]);
        });
    }

    @Test
    void aTaskAskingMoreOfANamedResourceThanAnyExecutorOffersIsRefusedNamingBothSides() {
        SchedulerHarness h = new SchedulerHarness(policy());
        FakeLink client = h.client("c");
        h.submitAll(client, List.of(named("four", 4, 0), named("licensed", 0, 1), named("two", 2, 0)));
        assertThat(delivered(client)).as("no executor yet: they wait").isEmpty();
        FakeLink e = h.executor("e", 4, 4, "gpus=3");
        FakeLink plain = h.executor("plain", 4, 4);
        assertThat(dispatched(e)).extracting(SchedulerHarness::nameOf).containsExactly("two");
        assertThat(dispatched(plain)).as("an executor offering no GPUs never gets a task that needs them").isEmpty();
        List<Message.DeliveredResult> refused = delivered(client);
        assertThat(refused).hasSize(2).allSatisfy(r -> {
            assertThat(r.execution().status()).isEqualTo(TaskStatus.REJECTED);
            assertThat(r.execution().permanent()).isTrue();
        });
        assertThat(refused.get(0).execution().detail()).contains("needs 1 core, 4 gpus of one executor")
                .contains("at most 4 slots").contains("3 gpus");
        assertThat(refused.get(1).execution().detail()).contains("1 license of one executor").contains("3 gpus")
                .doesNotContain("license,");
        h.scheduler.checkInvariants();
    }

    @Test
    void hasAName() {
        assertThat(policy().name()).isNotBlank();
        assertThat(DispatchPolicies.byName(policy().name()).name()).isEqualTo(policy().name());
    }

    /**
     * Submits {@code specs}, then until all are delivered: takes what each executor was sent, checks
     * what it holds ({@code check} with its index), completes a random part of it; the invariants
     * hold after every round, and every task succeeds once.
     */
    private static void runMixed(SchedulerHarness h, List<FakeLink> executors, FakeLink client, List<TaskSpec> specs,
                                 Random rnd, java.util.function.ObjIntConsumer<List<Message.DispatchedTask>> check) {
        List<List<Message.DispatchedTask>> held = new ArrayList<>();
        executors.forEach(e -> held.add(new ArrayList<>()));
        List<Long> submitted = h.submitAll(client, specs);
        int guard = 0;
        while (delivered(client).size() < submitted.size() && guard++ < 20_000) {
            for (int i = 0; i < executors.size(); i++) {
                List<Message.DispatchedTask> mine = held.get(i);
                mine.addAll(dispatched(executors.get(i)));
                check.accept(mine, i);
                completeSome(h, executors.get(i), mine, rnd);
            }
            h.scheduler.checkInvariants();
        }
        assertThat(delivered(client)).allSatisfy(r -> assertThat(r.execution().succeeded()).isTrue())
                .extracting(Message.DeliveredResult::clientTaskId).containsExactlyInAnyOrderElementsOf(submitted);
    }

    /** Completes a random number (maybe none) of the oldest tasks {@code e} holds; returns how many. */
    private static int completeSome(SchedulerHarness h, FakeLink e, List<Message.DispatchedTask> mine, Random rnd) {
        int done = mine.isEmpty() ? 0 : rnd.nextInt(mine.size() + 1);
        if (done > 0) {
            List<Message.DispatchedTask> finished = new ArrayList<>(mine.subList(0, done));
            mine.subList(0, done).clear();
            h.complete(e, finished);
        }
        return done;
    }
}
