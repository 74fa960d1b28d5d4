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

    private static List<TaskResult> join(List<CompletableFuture<TaskResult>> fs) throws Exception {
        CompletableFuture.allOf(fs.toArray(CompletableFuture<?>[]::new)).get(5, TimeUnit.MINUTES);
        return fs.stream().map(CompletableFuture::join).toList();
    }
}
