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
 * Urgent work overtakes a backlog, with real processes: 500 queued {@code sleep 0.05} at priority
 * 0 on two slots, then 20 at priority 10. Read from the results' dispatcher timestamps: each urgent
 * task was sent to the executor no later than every backlog task still queued when it arrived (in
 * one FIFO they would all have waited for the whole backlog).
 */
class PriorityTest {
    @Test
    void eachUrgentTaskStartsBeforeEveryBacklogTaskStillQueuedWhenItArrived() throws Exception {
        try (Topology t = new Topology(1, 2); FalkonClient client = t.client(); Instance in = client.createInstance()) {
            List<TaskSpec> backlog = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                backlog.add(TaskSpec.builder("sleep", "0.05").build());
            }
            List<CompletableFuture<TaskResult>> slow = in.submit(backlog);
            // the backlog is queued and running before the urgent work comes
            slow.get(20).get(2, TimeUnit.MINUTES);
            List<TaskSpec> urgent = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                urgent.add(TaskSpec.builder("sleep", "0.05").priority(10).build());
            }
            List<CompletableFuture<TaskResult>> fast = in.submit(urgent);
            List<TaskResult> u = join(fast);
            List<TaskResult> b = join(slow);
            assertThat(u).allSatisfy(r -> assertThat(r.succeeded()).isTrue());
            assertThat(b).allSatisfy(r -> assertThat(r.succeeded()).isTrue());
            long overtaken = 0;
            for (TaskResult r : u) {
                for (TaskResult w : b) {
                    if (w.dispatchedMicros() > r.submittedMicros()) { // still queued when r arrived
                        overtaken++;
                        assertThat(r.dispatchedMicros()).as("urgent task %d against backlog task %d", r.taskId(),
                                w.taskId()).isLessThanOrEqualTo(w.dispatchedMicros());
                    }
                }
            }
            assertThat(overtaken).as("the urgent tasks came while much of the backlog was queued")
                    .isGreaterThan(20L * 100);
        }
    }

    private static List<TaskResult> join(List<CompletableFuture<TaskResult>> fs) throws Exception {
        CompletableFuture.allOf(fs.toArray(CompletableFuture<?>[]::new)).get(5, TimeUnit.MINUTES);
        return fs.stream().map(CompletableFuture::join).toList();
    }
}
