package io.falkon.e2e.commands;

import io.falkon.client.TaskResult;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskStatus;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Named resources (docs/cli.md "GPUs and other resources"), checked against real executor
 * processes of each implementation. The devices are given by hand ({@code --resource gpus=0,1,2}):
 * no GPU is needed, and none is touched. What each task saw is what it printed from its own
 * environment, with its own start and end times, so the checks need no timing margins: an executor
 * takes a task's devices before starting it and gives them back after it has exited.
 */
abstract class ResourcesContract extends ExecutorFixture {
    /** Prints the task's devices, its count and its start time; sleeps; prints its end time. */
    private static final String PROBE = "echo \"${CUDA_VISIBLE_DEVICES-unset}|${FALKON_RESOURCE_GPUS-unset}|"
            + "${FALKON_RESOURCE_LICENSE-unset}|$(date +%s%N)\"; sleep 0.1; date +%s%N";

    private record Seen(int asked, String cuda, String count, String license, long start, long end) {
        static Seen of(int asked, TaskResult r) {
            String[] lines = new String(r.execution().stdout(), StandardCharsets.UTF_8).strip().split("\n");
            String[] f = lines[0].split("\\|", -1);
            return new Seen(asked, f[0], f[1], f[2], Long.parseLong(f[3]), Long.parseLong(lines[1]));
        }

        Set<String> devices() {
            return cuda.isEmpty() ? Set.of() : new HashSet<>(Arrays.asList(cuda.split(",")));
        }

        boolean overlaps(Seen o) {
            return start < o.end && o.start < end;
        }
    }

    @Test
    void noDeviceIsHeldByTwoRunningTasksAndEachTaskSeesExactlyItsCount() throws Exception {
        Dispatcher d = dispatcher(new FirstAvailable());
        executor(d.port(), "gpu-node", "--slots", "4", "--resource", "gpus=0,1,2");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        Random rnd = new Random(57);
        List<Integer> asked = new ArrayList<>();
        List<TaskSpec> specs = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            int gpus = rnd.nextInt(4);
            asked.add(gpus);
            specs.add(TaskSpec.builder("/bin/sh", "-c", PROBE).gpus(gpus).build());
        }
        List<TaskResult> results = all(instance(d.port(), "mix").submit(specs));
        List<Seen> seen = new ArrayList<>();
        for (int i = 0; i < results.size(); i++) {
            TaskResult r = results.get(i);
            assertThat(r.succeeded()).as(r.toString()).isTrue();
            Seen s = Seen.of(asked.get(i), r);
            seen.add(s);
            assertThat(s.devices()).as("task %d asked %d GPUs: CUDA_VISIBLE_DEVICES=%s", i, s.asked, s.cuda)
                    .hasSize(s.asked).isSubsetOf("0", "1", "2");
            assertThat(s.count).as("FALKON_RESOURCE_GPUS of task %d", i).isEqualTo(s.asked == 0 ? "unset" : s.cuda);
            if (s.asked == 0) {
                assertThat(s.cuda).as("a task that asks no GPU is shown none").isEmpty();
            }
        }
        for (int i = 0; i < seen.size(); i++) {
            for (int j = i + 1; j < seen.size(); j++) {
                Seen a = seen.get(i);
                Seen b = seen.get(j);
                Set<String> shared = new HashSet<>(a.devices());
                shared.retainAll(b.devices());
                assertThat(shared.isEmpty() || !a.overlaps(b))
                        .as("tasks %d and %d both held GPU %s while both ran", i, j, shared).isTrue();
            }
        }
        assertThat(d.status()).contains("\"resources\":{\"gpus\":{\"offered\":3,\"inUse\":0}}");
    }

    @Test
    void aTaskAskingMoreDevicesThanAnyExecutorHasIsRefusedWithItsReason() throws Exception {
        Dispatcher d = dispatcher(new FirstAvailable());
        executor(d.port(), "three", "--slots", "2", "--resource", "gpus=0,1,2");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        List<TaskResult> results = all(instance(d.port(), "greedy").submit(List.of(
                TaskSpec.builder("/bin/true").gpus(4).build(), TaskSpec.builder("/bin/true").gpus(3).build())));
        assertThat(results.get(0).execution().status()).isEqualTo(TaskStatus.REJECTED);
        assertThat(results.get(0).execution().detail()).contains("needs 1 core, 4 gpus of one executor")
                .contains("3 gpus");
        assertThat(results.get(1).succeeded()).as(results.get(1).toString()).isTrue();
    }

    @Test
    void aPersistentWorkerKeepsTheDevicesItWasStartedWithForItsWholeLife() throws Exception {
        Dispatcher d = dispatcher(new FirstAvailable());
        executor(d.port(), "resident-gpus", "--slots", "2", "--resource", "gpus=0,1");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        List<TaskSpec> specs = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            specs.add(ExecutorContract.forWorker(ExecutorContract.contractWorker(), "", "devices").gpus(1).build());
        }
        Map<String, String> deviceOf = new java.util.HashMap<>();
        for (TaskResult r : all(instance(d.port(), "resident").submit(specs))) {
            assertThat(r.succeeded()).as(r.toString()).isTrue();
            String[] f = r.stdout().strip().split(" ");
            String pid = f[0].substring("pid=".length());
            String started = f[1].substring("started=".length());
            assertThat(started).as("a worker started for a task of one GPU").isIn("0", "1");
            assertThat(deviceOf.putIfAbsent(pid, started)).as("worker %s's devices", pid).isIn(null, started);
        }
        // each slot takes its own device again, so each keeps its one worker
        assertThat(deviceOf).as("workers for 40 one-GPU tasks on 2 slots and 2 devices").hasSizeBetween(1, 2);
    }

    @Test
    void aCountedResourceLimitsHowManyTasksRunAtOnceAndIsNamedToEach() throws Exception {
        Dispatcher d = dispatcher(new FirstAvailable());
        executor(d.port(), "licensed", "--slots", "4", "--resource", "license=2", "--resource", "gpus=0");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        List<TaskSpec> specs = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            specs.add(TaskSpec.builder("/bin/sh", "-c", PROBE).namedResources(Map.of("license", 1)).build());
        }
        List<Seen> seen = new ArrayList<>();
        for (TaskResult r : all(instance(d.port(), "lic").submit(specs))) {
            assertThat(r.succeeded()).as(r.toString()).isTrue();
            seen.add(Seen.of(0, r));
        }
        for (Seen s : seen) {
            assertThat(s.license).isEqualTo("1");
            assertThat(s.cuda).as("gpus=0 turns the finding off: nothing is set").isEqualTo("unset");
            long atOnce = seen.stream().filter(o -> o.start <= s.start && s.start < o.end).count();
            assertThat(atOnce).as("tasks running when one started, with 2 licences").isLessThanOrEqualTo(2);
        }
    }
}
