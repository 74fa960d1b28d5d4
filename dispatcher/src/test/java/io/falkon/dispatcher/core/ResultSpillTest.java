package io.falkon.dispatcher.core;

import io.falkon.dispatcher.journal.SpillFiles;
import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.protocol.Execution;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import static io.falkon.dispatcher.core.SchedulerHarness.delivered;
import static io.falkon.dispatcher.core.SchedulerHarness.dispatched;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Results awaiting acknowledgement beyond a quarter of the memory budget go to the spill on disk
 * (the real {@link SpillFiles}, which is why this core test lives beside the journal, in the
 * dispatcher module): the heap stays bounded, dispatching never stops for them, and a
 * client that takes the instance over gets every one back, once, whether it was kept in memory or on disk.
 */
class ResultSpillTest {
    private static final int BUDGET = 4 << 20; // 1 MiB of results in memory, the rest spilled
    private static final int OUTPUT = 64 << 10;

    @TempDir
    Path tmp;
    private SpillFiles spill;
    private SchedulerHarness h;
    private FakeLink e;

    @BeforeEach
    void start() throws IOException {
        spill = SpillFiles.open(tmp.resolve("spill"), 1L << 30);
        h = new SchedulerHarness(new FirstAvailable(), SchedulerConfig.defaults().withMemoryBudgetBytes(BUDGET),
                Journal.NONE, spill);
    }

    @AfterEach
    void stop() {
        spill.close();
    }

    static String mode(Path p) {
        try {
            return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static Execution withOutput(int bytes) {
        byte[] out = new byte[bytes];
        Arrays.fill(out, (byte) 'x');
        return new Execution(TaskStatus.EXITED, 0, 0, 1, 2, out, new byte[0], "", ExtField.NONE);
    }

    /** A detached instance with {@code n} finished tasks of 64 KiB output each; returns its id. */
    private long detachedWithResults(FakeLink client, int n) {
        e = h.executor("e", n, n);
        h.submit(client, n);
        h.scheduler.handle(Event.gone(client, false));
        h.finish(e, dispatched(e), withOutput(OUTPUT));
        return h.instanceOf(client);
    }

    private FakeLink attach(FakeLink owner) {
        FakeLink b = new FakeLink("b-" + System.nanoTime());
        h.scheduler.handle(Event.client(b, new Message.Attach(1, h.instanceOf(owner), h.secretOf(owner))));
        h.scheduler.endBatch();
        return b;
    }

    @Test
    void resultsBeyondTheirShareGoToDiskAndDispatchingGoesOn() throws IOException {
        FakeLink a = h.client("a", 600);
        detachedWithResults(a, 100); // 6.4 MiB of results: more than the whole budget
        StatusSnapshot s = h.scheduler.snapshot();
        assertThat(s.retainedResultBytes()).isLessThanOrEqualTo(BUDGET / 4);
        assertThat(s.spilledResultBytes()).isGreaterThan(80L * OUTPUT);
        assertThat(s.holdingDispatch()).isFalse();
        assertThat(s.refusingBundles()).isFalse();
        // results hold task outputs: the spill is its owner's alone, whatever the umask
        assertThat(mode(tmp.resolve("spill"))).isEqualTo("rwx------");
        try (Stream<Path> files = Files.list(tmp.resolve("spill"))) {
            assertThat(files.toList()).isNotEmpty().allSatisfy(f -> assertThat(mode(f)).isEqualTo("rw-------"));
        }

        // new tasks are still dispatched
        FakeLink other = h.client("other");
        h.submit(other, 10);
        assertThat(dispatched(e)).hasSize(10);
    }

    @Test
    void aClientTakingTheInstanceOverGetsEveryResultOnceInFrameSizedDelivers() {
        FakeLink a = h.client("a", 600);
        detachedWithResults(a, 100);
        FakeLink b = attach(a);
        assertThat(b.sent(Message.Attached.class).get(0).redelivered()).isEqualTo(100);
        List<Message.DeliveredResult> got = delivered(b);
        assertThat(got).extracting(Message.DeliveredResult::seq).doesNotHaveDuplicates().hasSize(100);
        assertThat(got).extracting(Message.DeliveredResult::clientTaskId).doesNotHaveDuplicates();
        assertThat(got).allSatisfy(r -> assertThat(r.execution().stdout()).hasSize(OUTPUT));
        for (Message.Deliver d : b.sent(Message.Deliver.class)) {
            long bytes = d.results().stream().mapToLong(Instance::footprint).sum();
            assertThat(bytes).isLessThanOrEqualTo(ClientRequests.REDELIVER_CHUNK_BYTES);
        }
    }

    @Test
    void acknowledgedResultsAreNotRedeliveredAndTheFileGoesWhenAllAre() throws IOException {
        FakeLink a = h.client("a", 600);
        long id = detachedWithResults(a, 100);
        FakeLink b = attach(a);
        h.scheduler.handle(Event.client(b, new Message.Ack(id, 60))); // past the in-memory ones, into the spilled ones
        h.scheduler.endBatch();
        h.scheduler.handle(Event.gone(b, false));

        FakeLink c = attach(a);
        assertThat(c.sent(Message.Attached.class).get(0).redelivered()).isEqualTo(40);
        assertThat(delivered(c)).extracting(Message.DeliveredResult::seq)
                .containsExactlyInAnyOrderElementsOf(seqs(61, 100));

        h.scheduler.handle(Event.client(c, new Message.Ack(id, 100)));
        h.scheduler.endBatch();
        assertThat(spill.bytes()).isZero();
        assertThat(files()).isEmpty();
    }

    @Test
    void aDestroyedInstanceLeavesNothingOnDisk() throws IOException {
        FakeLink a = h.client("a", 600);
        long id = detachedWithResults(a, 50);
        assertThat(files()).hasSize(1);
        FakeLink b = attach(a);
        h.scheduler.handle(Event.client(b, new Message.Destroy(2, id)));
        h.scheduler.endBatch();
        assertThat(files()).isEmpty();
        assertThat(h.scheduler.snapshot().spilledResultBytes()).isZero();
    }

    @Test
    void aCompactedJournalHoldsTheSpilledResultsToo() {
        FakeLink a = h.client("a", 600);
        detachedWithResults(a, 100);
        List<Long> written = new ArrayList<>();
        h.scheduler.recovery().writeTo(new Journal() {
            @Override
            public void instanceCreated(InstanceRecord instance) {
            }

            @Override
            public void accepted(long instanceId, long clientTaskId, long submittedMicros, byte[] spec) {
            }

            @Override
            public void completed(long instanceId, Message.DeliveredResult result) {
                written.add(result.seq());
            }

            @Override
            public void acked(long instanceId, long upToSeq) {
            }

            @Override
            public void produced(long instanceId, String[] objectIds, String name, boolean ok, long failedProducer) {
                
            }

            @Override
            public void destroyed(long instanceId) {
            }

            @Override
            public void commit(Runnable send) {
                send.run();
            }
        });
        assertThat(written).containsExactlyInAnyOrderElementsOf(seqs(1, 100));
    }

    private static List<Long> seqs(long from, long to) {
        List<Long> out = new ArrayList<>();
        for (long s = from; s <= to; s++) {
            out.add(s);
        }
        return out;
    }

    private List<Path> files() throws IOException {
        Path dir = spill.dir();
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.toList();
        }
    }
}
