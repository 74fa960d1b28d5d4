package io.falkon.e2e.client;

import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import io.falkon.protocol.TaskSpec;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two users share a dispatcher, with real processes: instance A queues 2,000 {@code sleep 0.05} on
 * two slots; once it runs, instance B submits 100. The instances take turns, so while B's tasks
 * are dispatched about as many of A's are (one FIFO would have sent all of A's 2,000 first, about
 * 50 s of work, before any of B's). Read from the results' dispatcher timestamps.
 */
class FairShareTest {
    @Test
    void aLateInstanceTakesTurnsWithABacklogInsteadOfWaitingBehindIt() throws Exception {
        try (Topology t = new Topology(1, 2); FalkonClient client = t.client()) {
            Instance a = client.createInstance("a");
            List<TaskSpec> backlog = new ArrayList<>();
            for (int i = 0; i < 2000; i++) {
                backlog.add(TaskSpec.builder("sleep", "0.05").build());
            }
            List<CompletableFuture<TaskResult>> as = a.submit(backlog);
            as.get(20).get(2, TimeUnit.MINUTES); // A runs
            try (Instance b = client.createInstance("b")) {
                List<TaskSpec> small = new ArrayList<>();
                for (int i = 0; i < 100; i++) {
                    small.add(TaskSpec.builder("sleep", "0.05").build());
                }
                List<TaskResult> bs = join(b.submit(small));
                assertThat(bs).allSatisfy(r -> assertThat(r.succeeded()).isTrue());
                long from = bs.stream().mapToLong(TaskResult::submittedMicros).min().orElseThrow();
                long to = bs.stream().mapToLong(TaskResult::dispatchedMicros).max().orElseThrow();
                // A's tasks that finished meanwhile (those dispatched in B's window all have, but the last two)
                long aMeanwhile = as.stream().filter(CompletableFuture::isDone).map(CompletableFuture::join)
                        .filter(r -> r.dispatchedMicros() >= from && r.dispatchedMicros() <= to).count();
                assertThat(aMeanwhile).as("A's tasks dispatched while B's 100 were").isBetween(50L, 110L);
            }
            a.close(); // cancels the rest of A's backlog
        }
    }

    /**
     * A client cannot take the machine by raising priorities (issue 53): B queues 60 tasks at priority
     * 0, then A 100 at the highest priority there is. A's priority orders only A's own tasks: while
     * both have queued tasks, the instances still take turns, and B gets its (equal) share.
     */
    @Test
    void aClientCannotTakeMoreThanItsShareByRaisingItsPriorities() throws Exception {
        try (Topology t = new Topology(1, 2); FalkonClient client = t.client();
             Instance b = client.createInstance("b"); Instance a = client.createInstance("a")) {
            List<CompletableFuture<TaskResult>> bs = b.submit(sleeps(60, 0));
            List<CompletableFuture<TaskResult>> as = a.submit(sleeps(100, Integer.MAX_VALUE));
            double share = shareWhileBothQueued(join(bs), join(as));
            assertThat(share).as("B's share of the dispatches while both had tasks queued").isGreaterThanOrEqualTo(0.4);
        }
    }

    /** The operator's shares ({@code --share-file}): an instance named "heavy" with 3 gets three turns to one. */
    @Test
    void sharesSetByTheOperatorWeighTheTurns() throws Exception {
        var config = io.falkon.dispatcher.DispatcherConfig.local().withScheduler(
                io.falkon.dispatcher.core.SchedulerConfig.defaults().withShares(java.util.Map.of("heavy", 3.0)));
        try (Topology t = new Topology(config, 1, 2); FalkonClient client = t.client();
             Instance light = client.createInstance("light"); Instance heavy = client.createInstance("heavy")) {
            List<CompletableFuture<TaskResult>> ls = light.submit(sleeps(100, 0));
            List<CompletableFuture<TaskResult>> hs = heavy.submit(sleeps(150, 0));
            double share = shareWhileBothQueued(join(ls), join(hs));
            assertThat(share).as("the light instance's share of the dispatches").isBetween(0.15, 0.35);
        }
    }

    private static List<TaskSpec> sleeps(int n, int priority) {
        List<TaskSpec> specs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            specs.add(TaskSpec.builder("sleep", "0.02").priority(priority).build());
        }
        return specs;
    }

    /**
     * Of the dispatches made while both instances had tasks queued (from the later one's last
     * submission to the first instance's last dispatch), the share that went to {@code first}'s tasks.
     */
    private static double shareWhileBothQueued(List<TaskResult> first, List<TaskResult> second) {
        assertThat(first).allSatisfy(r -> assertThat(r.succeeded()).isTrue());
        assertThat(second).allSatisfy(r -> assertThat(r.succeeded()).isTrue());
        long from = java.util.stream.Stream.concat(first.stream(), second.stream())
                .mapToLong(TaskResult::submittedMicros).max().orElseThrow();
        long to = Math.min(first.stream().mapToLong(TaskResult::dispatchedMicros).max().orElseThrow(),
                second.stream().mapToLong(TaskResult::dispatchedMicros).max().orElseThrow());
        long mine = first.stream().filter(r -> r.dispatchedMicros() > from && r.dispatchedMicros() <= to).count();
        long theirs = second.stream().filter(r -> r.dispatchedMicros() > from && r.dispatchedMicros() <= to).count();
        assertThat(mine + theirs).as("dispatches while both had tasks queued").isGreaterThan(40);
        return (double) mine / (mine + theirs);
    }

    private static List<TaskResult> join(List<CompletableFuture<TaskResult>> fs) throws Exception {
        CompletableFuture.allOf(fs.toArray(CompletableFuture<?>[]::new)).get(5, TimeUnit.MINUTES);
        return fs.stream().map(CompletableFuture::join).toList();
    }
}
