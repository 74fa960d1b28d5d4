package io.falkon.executor.run;

import io.falkon.datacache.OutputStore;
import io.falkon.datacache.fetch.StoreFetcher;
import io.falkon.protocol.DataCodec;
import io.falkon.protocol.Execution;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.ExtTags;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskOutput;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A staged task in two halves (issue 58, as the C executor's {@code fk_staging_begin} and
 * {@code fk_staging_finish}): the first stages and runs it, the second, on any thread, saves its
 * outputs; and the slot pool takes its next job while another thread does the second half.
 */
class OutputsSavedOffTheSlotTest {

    @TempDir
    Path dir;

    private Staging staging() throws IOException {
        Files.createDirectories(dir.resolve("spool")); // the executor makes its spool before its slots
        return new Staging(null, new StoreFetcher(dir.resolve("store"), null, null),
                new OutputStore(dir.resolve("store")), null, dir.resolve("sandboxes"));
    }

    private static TaskSpec writing(String command) {
        return TaskSpec.builder("/bin/sh", "-c", command)
                .outputs(List.of(new TaskOutput("out.txt", "run/out.txt"))).build();
    }

    private static Path onlySandbox(Path sandboxes) throws IOException {
        try (var s = Files.list(sandboxes)) {
            return s.findFirst().orElse(null);
        }
    }

    @Test
    void theFirstHalfRunsTheTaskAndTheSecondOnAnotherThreadSavesItsOutputs() throws Exception {
        Staging staging = staging();
        TaskRunner runner = new JdkRunner(dir.resolve("spool"), 0, 65536, 1 << 20, dir);
        Staging.Ran ran = staging.begin(new Job(1, 0, writing("echo hello > out.txt"), 0), runner);
        assertThat(ran.done()).isFalse();
        assertThat(ran.result().succeeded()).as(ran.result().toString()).isTrue();
        assertThat(dir.resolve("store/run/out.txt")).as("not saved yet").doesNotExist();
        Path sandbox = onlySandbox(dir.resolve("sandboxes"));
        assertThat(sandbox.resolve("out.txt")).hasContent("hello");

        Execution[] finished = new Execution[1];
        Thread other = new Thread(() -> finished[0] = staging.finish(ran));
        other.start();
        other.join();
        assertThat(finished[0].succeeded()).as(finished[0].toString()).isTrue();
        assertThat(dir.resolve("store/run/out.txt")).hasContent("hello");
        assertThat(sandbox).as("the sandbox is gone").doesNotExist();
        ExtField stats = finished[0].ext().stream().filter(f -> f.tag() == ExtTags.DATA_STATS).findFirst()
                .orElseThrow();
        assertThat(DataCodec.decodeStats(stats.value()).bytesWritten()).isEqualTo(6);

        Staging.Ran failed = staging.begin(new Job(2, 0, writing("echo bad > out.txt; exit 3"), 0), runner);
        Execution x = staging.finish(failed);
        assertThat(x.exitCode()).isEqualTo(3);
        assertThat(dir.resolve("store/run/out.txt")).as("a failed task's output is not saved").hasContent("hello");

    }

    /**
     * One slot: the staged task's result is held up in the callback until the next task's result
     * has come. Only a slot that left the first task's second half to another thread can run the
     * second task meanwhile; one that did it itself would wait forever.
     */
    @Test
    void theSlotTakesItsNextJobWhileAnotherThreadSavesAndReports() throws Exception {
        CountDownLatch secondReported = new CountDownLatch(1);
        Map<Long, String> reportedOn = new ConcurrentHashMap<>();
        Map<Long, Message.TaskResult> results = new ConcurrentHashMap<>();
        CountDownLatch both = new CountDownLatch(2);
        try (SlotPool pool = new SlotPool(1, SlotPool.Runner.JDK, dir.resolve("spool"), 65536, 1 << 20, dir,
                WorkerLimits.NONE, staging(), (job, r) -> {
                    reportedOn.put(job.taskId(), Thread.currentThread().getName());
                    if (job.taskId() == 1) {
                        try {
                            secondReported.await(60, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    } else {
                        secondReported.countDown();
                    }
                    results.put(job.taskId(), r);
                    both.countDown();
                })) {
            pool.submit(new Job(1, 0, writing("echo one > out.txt"), 0));
            pool.submit(new Job(2, 0, TaskSpec.builder("/bin/true").build(), 0));
            assertThat(secondReported.await(60, TimeUnit.SECONDS)).as("the second task ran and was reported")
                    .isTrue();
            assertThat(both.await(60, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(reportedOn.get(1L)).isEqualTo("falkon-save");
        assertThat(reportedOn.get(2L)).startsWith("falkon-slot-");
        assertThat(results.get(1L).execution().succeeded()).isTrue();
        assertThat(dir.resolve("store/run/out.txt")).hasContent("one");
        try (var s = Files.list(dir.resolve("sandboxes"))) {
            assertThat(s).as("every sandbox removed").isEmpty();
        }
    }
}
