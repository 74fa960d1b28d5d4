package io.falkon.provisioner;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import org.assertj.core.api.Assertions;

/** The planner step by step, time given by the test: acquisition policies, stages, releases, bounds. */
class PlannerTest {
    private static final Planner.Bounds BOUNDS = new Planner.Bounds(0, 64, 32, 2, 60, 1.0);

    /** Drives a planner whose requests are accepted but never start: the sizes it asks for in a row. */
    private static List<Integer> requestSizes(AcquisitionPolicy policy, long queued, int decisions) {
        Planner p = new Planner(BOUNDS, policy, ReleasePolicy.distributed(Duration.ofSeconds(10)));
        List<Integer> sizes = new ArrayList<>();
        Map<String, JobState> jobs = new HashMap<>();
        for (int i = 0; i < decisions; i++) {
            Planner.Decision d = p.decide(new Planner.Observation(i * 1000L, queued, 0, 0, Map.of(), Map.of(), jobs));
            sizes.add(d.requestNodes());
            if (d.requestNodes() > 0) {
                p.requested("t-a" + i, d.requestNodes(), "job" + i, i * 1000L);
                jobs.put("job" + i, JobState.QUEUED);
            }
        }
        return sizes;
    }

    @Test
    void eachAcquisitionPolicyAsksForItsSequenceUntilTheQueueIsCovered() {
        // 40 queued tasks at 2 slots per node need 20 nodes
        assertThat(requestSizes(AcquisitionPolicy.ONE_AT_A_TIME, 40, 4)).containsExactly(1, 1, 1, 1);
        assertThat(requestSizes(AcquisitionPolicy.ADDITIVE, 40, 7)).containsExactly(1, 2, 3, 4, 5, 5, 0);
        assertThat(requestSizes(AcquisitionPolicy.EXPONENTIAL, 40, 6)).containsExactly(1, 2, 4, 8, 5, 0);
        assertThat(requestSizes(AcquisitionPolicy.ALL_AT_ONCE, 40, 2)).containsExactly(20, 0);
        // optimal: 40 tasks x 1 s over 2 slots x 60 s: one node finishes them within an allocation
        assertThat(requestSizes(AcquisitionPolicy.OPTIMAL, 40, 2)).containsExactly(1, 1);
        assertThat(requestSizes(AcquisitionPolicy.OPTIMAL, 600, 1)).containsExactly(5);
    }

    @Test
    void requestsRespectTheMaximumNodesAndTheNodesPerAllocation() {
        Planner p = new Planner(new Planner.Bounds(0, 10, 4, 1, 60, 1), AcquisitionPolicy.ALL_AT_ONCE,
                ReleasePolicy.distributed(Duration.ZERO));
        Map<String, JobState> jobs = new HashMap<>();
        List<Integer> sizes = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            int n = p.decide(new Planner.Observation(i, 1000, 0, 0, Map.of(), Map.of(), jobs)).requestNodes();
            sizes.add(n);
            if (n > 0) {
                p.requested("x-a" + i, n, "j" + i, i);
                jobs.put("j" + i, JobState.QUEUED);
            }
        }
        assertThat(sizes).containsExactly(4, 4, 2, 0, 0);
    }

    @Test
    void allocationsAreSizedByTheCoresAndMemoryTasksNeedNotByTheirNumber() {
        Planner byCores = new Planner(new Planner.Bounds(0, 16, 16, 4, 60, 1), AcquisitionPolicy.ALL_AT_ONCE,
                ReleasePolicy.distributed(Duration.ofSeconds(5)));
        // 10 queued tasks of 4 cores each on nodes of 4 slots: 10 nodes, not the 3 that 10 tasks would need
        assertThat(byCores.decide(new Planner.Observation(0, 10, 0, 0, Map.of(), Map.of(), Map.of(),
                new Planner.Need(40, 0, 0, 0, 0))).requestNodes()).isEqualTo(10);
        Planner byMemory = new Planner(new Planner.Bounds(0, 16, 16, 4, 60, 1), AcquisitionPolicy.ALL_AT_ONCE,
                ReleasePolicy.distributed(Duration.ofSeconds(5)));
        // 4 slots are enough for 4 one-core tasks, but they state 4 x 6 GiB and the one executor offers 8 GiB:
        // two more nodes like it
        assertThat(byMemory.decide(new Planner.Observation(0, 4, 0, 4, Map.of(), Map.of(), Map.of(),
                new Planner.Need(4, 0, 4 * 6144, 8192, 1))).requestNodes()).isEqualTo(2);
        // while no executor advertises memory, stated memory cannot be weighed: cores alone decide
        assertThat(new Planner(new Planner.Bounds(0, 16, 16, 4, 60, 1), AcquisitionPolicy.ALL_AT_ONCE,
                ReleasePolicy.distributed(Duration.ofSeconds(5))).decide(new Planner.Observation(0, 4, 0, 4, Map.of(),
                Map.of(), Map.of(), new Planner.Need(4, 0, 4 * 6144, 0, 0))).requestNodes()).isZero();
    }

    @Test
    void whileTasksAskForGpusNodesComeWithThemAndAreAddedForTheGpusTheExecutorsLack() {
        Planner p = new Planner(new Planner.Bounds(0, 16, 16, 4, 60, 1, 2), AcquisitionPolicy.ALL_AT_ONCE,
                ReleasePolicy.distributed(Duration.ofSeconds(5)));
        // 4 one-core tasks of 2 GPUs each, one executor of 4 slots offering 2 GPUs: 3 more nodes of 2 GPUs
        Planner.Decision d = p.decide(new Planner.Observation(0, 4, 0, 4, Map.of(), Map.of(), Map.of(),
                new Planner.Need(4, 0, 0, 0, 0, 8, 2)));
        assertThat(d.requestNodes()).isEqualTo(3);
        assertThat(d.gpusPerNode()).isEqualTo(2);
        // no task asks for a GPU: nodes come without
        Planner plain = new Planner(new Planner.Bounds(0, 16, 16, 4, 60, 1, 2), AcquisitionPolicy.ALL_AT_ONCE,
                ReleasePolicy.distributed(Duration.ofSeconds(5)));
        Planner.Decision none = plain.decide(new Planner.Observation(0, 8, 0, 0, Map.of(), Map.of(), Map.of(),
                new Planner.Need(8, 0, 0, 0, 0, 0, 0)));
        assertThat(none.requestNodes()).isEqualTo(2);
        assertThat(none.gpusPerNode()).isZero();
    }

    @Test
    void eachSchedulerIsAskedForGpusInItsOwnForm() {
        JobRequest r = new JobRequest("g1", 2, 4, Duration.ofMinutes(5), List.of("falkon-executor"), Path.of("/w"), 2);
        assertThat(new io.falkon.provisioner.lrm.SlurmAdapter(new io.falkon.provisioner.lrm.Shell()).script(r))
                .contains("#SBATCH --gres=gpu:2\n");
        assertThat(new io.falkon.provisioner.lrm.SgeAdapter(new io.falkon.provisioner.lrm.Shell(), "smp").script(r))
                .contains("#$ -l gpu=1\n"); // per slot: 2 GPUs over 4 slots
        assertThat(new io.falkon.provisioner.lrm.PbsAdapter(new io.falkon.provisioner.lrm.Shell(),
                io.falkon.provisioner.lrm.PbsAdapter.Flavor.TORQUE).script(r)).contains("-l nodes=2:ppn=4:gpus=2\n");
        assertThat(new io.falkon.provisioner.lrm.PbsAdapter(new io.falkon.provisioner.lrm.Shell(),
                io.falkon.provisioner.lrm.PbsAdapter.Flavor.PRO).script(r))
                .contains("-l select=2:ncpus=4:ngpus=2:mpiprocs=1\n");
        JobRequest plain = new JobRequest("p1", 2, 4, Duration.ofMinutes(5), List.of("falkon-executor"), Path.of("/w"));
        assertThat(new io.falkon.provisioner.lrm.SlurmAdapter(new io.falkon.provisioner.lrm.Shell()).script(plain))
                .doesNotContain("gres");
    }

    @Test
    void theMinimumIsKeptEvenWithAnEmptyQueue() {
        Planner p = new Planner(new Planner.Bounds(2, 8, 8, 4, 60, 1), AcquisitionPolicy.ONE_AT_A_TIME,
                ReleasePolicy.distributed(Duration.ofSeconds(5)));
        assertThat(p.decide(new Planner.Observation(0, 0, 0, 0, Map.of(), Map.of(), Map.of())).requestNodes())
                .isEqualTo(2);
    }

    @Test
    void anAllocationGoesThroughItsStagesWithTheTimesTheyWereSeen() {
        Planner p = new Planner(BOUNDS, AcquisitionPolicy.ALL_AT_ONCE, ReleasePolicy.distributed(Duration.ofSeconds(1)));
        Planner.Decision d = p.decide(new Planner.Observation(0, 4, 0, 0, Map.of(), Map.of(), Map.of()));
        Allocation a = p.requested("t-a1", d.requestNodes(), "7", 0);
        assertThat(a.nodes()).isEqualTo(2);
        p.decide(new Planner.Observation(100, 4, 0, 0, Map.of(), Map.of(), Map.of("7", JobState.QUEUED)));
        assertThat(a.stage()).isEqualTo(Allocation.Stage.QUEUED);
        // registered executors count as running even before the scheduler says so
        p.decide(new Planner.Observation(300, 4, 0, 2, Map.of("t-a1", 1), Map.of(), Map.of("7", JobState.QUEUED)));
        assertThat(a.stage()).isEqualTo(Allocation.Stage.RUNNING);
        Planner.Decision none = p.decide(new Planner.Observation(400, 0, 4, 4, Map.of("t-a1", 2), Map.of("t-a1", 2),
                Map.of("7", JobState.RUNNING)));
        assertThat(a.stage()).isEqualTo(Allocation.Stage.REGISTERED);
        assertThat(none.requestNodes()).isZero(); // 4 tasks, 4 slots
        p.decide(new Planner.Observation(900, 0, 0, 0, Map.of(), Map.of(), Map.of("7", JobState.DONE)));
        assertThat(a.stage()).isEqualTo(Allocation.Stage.RELEASED);
        assertThat(List.of(a.at(Allocation.Stage.REQUESTED), a.at(Allocation.Stage.QUEUED),
                a.at(Allocation.Stage.RUNNING), a.at(Allocation.Stage.REGISTERED), a.at(Allocation.Stage.RELEASED)))
                .containsExactly(0L, 100L, 300L, 400L, 900L);
        assertThat(p.activeJobIds()).isEmpty();
    }

    @Test
    void centralizedReleaseCancelsIdleAllocationsOnceTheQueueStaysShort() {
        Planner p = new Planner(new Planner.Bounds(1, 8, 8, 1, 60, 1), AcquisitionPolicy.ONE_AT_A_TIME,
                ReleasePolicy.centralized(Duration.ofSeconds(10), 1));
        Allocation a1 = p.requested("c-a1", 1, "1", 0);
        Allocation a2 = p.requested("c-a2", 1, "2", 0);
        Map<String, JobState> running = Map.of("1", JobState.RUNNING, "2", JobState.RUNNING);
        Map<String, Integer> both = Map.of("c-a1", 1, "c-a2", 1);
        // busy: nothing is released however long it takes
        assertThat(p.decide(new Planner.Observation(0, 0, 2, 2, both, both, running)).cancel()).isEmpty();
        assertThat(p.decide(new Planner.Observation(20_000, 0, 2, 2, both, both, running)).cancel()).isEmpty();
        // idle from 25 s, queue empty: released 10 s later, newest first, keeping the minimum of one node
        Map<String, Integer> idle = Map.of();
        assertThat(p.decide(new Planner.Observation(25_000, 0, 0, 2, both, idle, running)).cancel()).isEmpty();
        assertThat(p.decide(new Planner.Observation(31_000, 0, 0, 2, both, idle, running)).cancel()).isEmpty();
        assertThat(p.decide(new Planner.Observation(35_000, 0, 0, 2, both, idle, running)).cancel())
                .containsExactly(a2);
        assertThat(a2.cancelRequested()).isTrue();
        assertThat(a1.cancelRequested()).isFalse();
    }

    @Test
    void policiesAreFoundByName() {
        for (String n : List.of("one-at-a-time", "additive", "exponential", "all-at-once", "optimal")) {
            assertThat(AcquisitionPolicy.byName(n).name()).isEqualTo(n);
        }
        Assertions.assertThatThrownBy(() -> AcquisitionPolicy.byName("greedy"))
                .hasMessageContaining("unknown acquisition policy 'greedy'");
    }

    @Test
    void inTheTieredLayoutAnAllocationIsRegisteredWhenAllButItsDispatcherNodeAre() {
        Planner p = new Planner(new Planner.Bounds(0, 8, 4, 2, 60, 1), AcquisitionPolicy.ALL_AT_ONCE,
                ReleasePolicy.centralized(Duration.ofSeconds(10), 1), true);
        Allocation four = p.requested("t-a1", 4, "j1", 0);
        Allocation one = p.requested("t-a2", 1, "j2", 0);
        assertThat(four.executors()).as("one node runs the dispatcher").isEqualTo(3);
        assertThat(one.executors()).as("a one-node allocation runs both").isEqualTo(1);
        Map<String, JobState> running = Map.of("j1", JobState.RUNNING, "j2", JobState.RUNNING);
        Planner.Decision d = p.decide(new Planner.Observation(1000, 20, 0, 8, Map.of("t-a1", 3, "t-a2", 1), Map.of(),
                running));
        assertThat(four.stage()).isEqualTo(Allocation.Stage.REGISTERED);
        assertThat(one.stage()).isEqualTo(Allocation.Stage.REGISTERED);
        // 20 queued against 8 slots registered: (20 - 8) / 2 = 6 more nodes, capped by the 3 left
        assertThat(d.requestNodes()).isEqualTo(3);
    }
}
