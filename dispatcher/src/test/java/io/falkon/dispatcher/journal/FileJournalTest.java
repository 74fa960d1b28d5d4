package io.falkon.dispatcher.journal;

import io.falkon.dispatcher.core.Event;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.falkon.dispatcher.core.FakeLink;
import io.falkon.dispatcher.core.SchedulerConfig;
import io.falkon.dispatcher.core.SchedulerHarness;
import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

import static io.falkon.dispatcher.core.SchedulerHarness.dispatched;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import java.nio.ByteBuffer;

class FileJournalTest {
    @TempDir
    Path dir;
    final ListAppender<ILoggingEvent> logged = new ListAppender<>();

    @BeforeEach
    void listen() {
        logged.start();
        ((Logger) LoggerFactory.getLogger(FileJournal.class)).addAppender(logged);
    }

    @AfterEach
    void stopListening() {
        ((Logger) LoggerFactory.getLogger(FileJournal.class)).detachAppender(logged);
    }

    @Test
    void aRestartRequeuesUnfinishedTasksAndKeepsUnacknowledgedResults() throws Exception {
        FileJournal journal = FileJournal.open(dir, FsyncPolicy.ALWAYS);
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable(), SchedulerConfig.defaults(), journal);
        FakeLink e = h.executor("e", 2, 2);
        FakeLink client = h.client("c", 60);
        journal.close(); // drains the writer, so the client has its reply
        long id = h.instanceOf(client);
        String secret = h.secretOf(client);
        journal = FileJournal.open(dir, FsyncPolicy.ALWAYS);
        h = new SchedulerHarness(new FirstAvailable(), SchedulerConfig.defaults(), journal);
        journal.restoreInto(h.scheduler.recovery());
        e = h.executor("e", 2, 2);
        FakeLink again = new FakeLink("again");
        h.scheduler.handle(Event.client(again, new Message.Attach(1, id, secret)));
        h.submit(again, id, 5);
        journal.sync(); // replies go out once the batch is durable
        h.complete(e, dispatched(e));
        h.scheduler.handle(Event.client(again, new Message.Ack(id, 1)));
        h.scheduler.endBatch();
        journal.close();

        FileJournal reopened = FileJournal.open(dir, FsyncPolicy.ALWAYS);
        assertThat(reopened.restoredInstances()).isEqualTo(1);
        assertThat(reopened.restoredTasks()).isEqualTo(3);
        SchedulerHarness after = new SchedulerHarness(new FirstAvailable(), SchedulerConfig.defaults(), reopened);
        reopened.restoreInto(after.scheduler.recovery());
        assertThat(after.scheduler.heldCount()).as("held for their client").isEqualTo(3);
        assertThat(after.scheduler.queuedCount()).isZero();
        FakeLink back = new FakeLink("back");
        after.scheduler.handle(Event.client(back, new Message.Attach(7, id, secret)));
        after.scheduler.endBatch();
        assertThat(after.scheduler.heldCount()).isZero();
        assertThat(after.scheduler.queuedCount()).as("queued again once the client is back").isEqualTo(3);
        reopened.close(); // drains: the replies are out
        Message.Attached attached = back.sent(Message.Attached.class).get(0);
        assertThat(attached.highestClientTaskId()).isEqualTo(4);
        assertThat(attached.redelivered()).isEqualTo(1);
        assertThat(SchedulerHarness.delivered(back)).extracting(Message.DeliveredResult::seq).containsExactly(2L);
    }

    @Test
    void aRestartKeepsEveryDependencyWaitingTasksWaitAndFinishedProducersStayKnown() throws Exception {
        FileJournal journal = FileJournal.open(dir, FsyncPolicy.ALWAYS);
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable(), SchedulerConfig.defaults(), journal);
        FakeLink e = h.executor("e", 1, 1);
        FakeLink client = h.client("c", 60);
        journal.sync();
        long id = h.instanceOf(client);
        String secret = h.secretOf(client);
        h.submitAll(client, List.of(TaskSpec.builder("/bin/true").name("first").build(),
                TaskSpec.builder("/bin/true").name("second").after("first").build(),
                TaskSpec.builder("/bin/true").name("third").after("second").build()));
        journal.sync();
        h.complete(e, dispatched(e)); // first succeeds: second is released and dispatched
        journal.sync(); // what a batch sends goes out once its records are durable
        assertThat(dispatched(e)).extracting(SchedulerHarness::nameOf).containsExactly("second");
        journal.close(); // the dispatcher dies here (second running, third waiting)

        FileJournal reopened = FileJournal.open(dir, FsyncPolicy.ALWAYS);
        SchedulerHarness after = new SchedulerHarness(new FirstAvailable(), SchedulerConfig.defaults(), reopened);
        reopened.restoreInto(after.scheduler.recovery());
        assertThat(after.scheduler.heldCount()).as("second and third, held for their client").isEqualTo(2);
        FakeLink back = new FakeLink("back");
        after.scheduler.handle(Event.client(back, new Message.Attach(7, id, secret)));
        assertThat(after.scheduler.queuedCount()).as("second, to run again").isEqualTo(1);
        assertThat(after.scheduler.waitingCount()).as("third still waits").isEqualTo(1);
        after.scheduler.endBatch();
        FakeLink e2 = after.executor("e2", 1, 1);
        reopened.sync();
        List<Message.DispatchedTask> second = dispatched(e2);
        assertThat(second).extracting(SchedulerHarness::nameOf).containsExactly("second");
        // a task submitted after the restart, after the one that finished before it: its name is still known
        after.continueAfter(back.sent(Message.Attached.class).get(0).highestClientTaskId());
        List<Long> late = after.submitAll(back, id, List.of(TaskSpec.builder("/bin/true").name("late").after("first")
                .build()));
        after.complete(e2, second);
        reopened.sync();
        after.complete(e2, dispatched(e2));
        reopened.sync();
        after.complete(e2, dispatched(e2));
        reopened.close();
        assertThat(back.sent(Message.ErrorMessage.class)).as("'late' was accepted: 'first' is still known").isEmpty();
        assertThat(SchedulerHarness.delivered(back)).extracting(Message.DeliveredResult::execution)
                .allSatisfy(x -> assertThat(x.succeeded()).isTrue());
        assertThat(SchedulerHarness.delivered(back)).extracting(Message.DeliveredResult::clientTaskId)
                .contains(late.get(0), 1L, 2L); // late, second, third
        assertThat(after.scheduler.waitingCount()).isZero();
        assertThat(after.scheduler.queuedCount()).isZero();
    }

    @Test
    void theJournalIsItsOwnersAloneWhateverTheUmask() throws Exception {
        // it holds instance secrets, task commands and environments, and outputs
        Path in = dir.resolve("made/by/the/dispatcher");
        FileJournal journal = FileJournal.open(in, FsyncPolicy.NEVER);
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable(), SchedulerConfig.defaults(), journal);
        FakeLink c = h.client("c", 60);
        journal.sync(); // the instance's reply goes out once its record is durable
        h.submit(c, 3);
        journal.close();
        for (Path d = in; !d.equals(dir); d = d.getParent()) {
            assertThat(mode(d)).as("%s", d).isEqualTo("rwx------");
        }
        try (var files = Files.list(in)) {
            assertThat(files.toList()).isNotEmpty().allSatisfy(f -> assertThat(mode(f)).as("%s", f).isEqualTo("rw-------"));
        }
        // a journal left by an older version with the umask's mode becomes owner-only when it is reopened
        Files.setPosixFilePermissions(in.resolve(FileJournal.FILE), PosixFilePermissions.fromString("rw-r--r--"));
        FileJournal.open(in, FsyncPolicy.NEVER).close();
        assertThat(mode(in.resolve(FileJournal.FILE))).isEqualTo("rw-------");
    }

    private static String mode(Path p) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }

    @Test
    void aTornTailIsTruncatedWithAWarningAndTheRestReplays() throws Exception {
        long id = seed(4);
        Path file = dir.resolve(FileJournal.FILE);
        long intact = Files.size(file);
        // half a record: the length says 100 bytes, 10 follow
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.APPEND)) {
            ch.write(ByteBuffer.wrap(new byte[]{0, 0, 0, 100, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}));
        }
        FileJournal j = FileJournal.open(dir, FsyncPolicy.ALWAYS);
        assertThat(j.restoredTasks()).isEqualTo(4);
        j.close();
        assertThat(logged.list).anySatisfy(ev -> assertThat(ev.getFormattedMessage()).contains("torn record")
                .contains("offset " + intact));
        assertThat(id).isNotZero();
    }

    @Test
    void aCorruptRecordEndsTheReplayThere() throws Exception {
        seed(4);
        Path file = dir.resolve(FileJournal.FILE);
        byte[] bytes = Files.readAllBytes(file);
        bytes[bytes.length - 3] ^= 0x5A; // inside the last record's body
        Files.write(file, bytes);
        FileJournal j = FileJournal.open(dir, FsyncPolicy.ALWAYS);
        assertThat(j.restoredTasks()).isEqualTo(3);
        j.close();
        assertThat(logged.list).anySatisfy(ev -> assertThat(ev.getFormattedMessage()).contains("checksum"));
        // and the truncated journal is whole again
        FileJournal again = FileJournal.open(dir, FsyncPolicy.ALWAYS);
        assertThat(again.restoredTasks()).isEqualTo(3);
        again.close();
    }

    @Test
    void garbageThatIsNotAJournalIsRefusedNotOverwritten() throws Exception {
        Files.writeString(dir.resolve(FileJournal.FILE), "this is somebody's file, not a journal");
        assertThatThrownBy(() -> FileJournal.open(dir, FsyncPolicy.ALWAYS)).isInstanceOf(IOException.class)
                .hasMessageContaining("not a Falkon journal");
        assertThat(Files.readString(dir.resolve(FileJournal.FILE))).startsWith("this is somebody's file");
    }

    @Test
    void twoDispatchersCannotShareAJournal() throws Exception {
        FileJournal first = FileJournal.open(dir, FsyncPolicy.NEVER);
        try {
            assertThatThrownBy(() -> FileJournal.open(dir, FsyncPolicy.NEVER))
                    .hasMessageContaining("another dispatcher is using the journal");
        } finally {
            first.close();
        }
    }

    @Test
    void compactionKeepsOnlyTheLiveStateAndReplaysTheSame() throws Exception {
        FileJournal journal = FileJournal.open(dir, FsyncPolicy.NEVER);
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable(), SchedulerConfig.defaults(), journal);
        FakeLink e = h.executor("e", 100, 100);
        FakeLink client = h.client("c", 60);
        journal.close();
        long id = h.instanceOf(client);
        String secret = h.secretOf(client);
        journal = FileJournal.open(dir, FsyncPolicy.NEVER);
        h = new SchedulerHarness(new FirstAvailable(), SchedulerConfig.defaults(), journal);
        journal.restoreInto(h.scheduler.recovery());
        e = h.executor("e", 100, 100);
        FakeLink c = new FakeLink("c2");
        h.scheduler.handle(Event.client(c, new Message.Attach(1, id, secret)));
        long seq = 0;
        for (int round = 0; round < 50; round++) {
            h.submit(c, id, 100);
            journal.sync();
            h.complete(e, dispatched(e));
            seq += 100;
            h.scheduler.handle(Event.client(c, new Message.Ack(id, seq)));
        }
        h.submit(c, id, 7); // these stay unfinished
        h.scheduler.endBatch();
        FileJournal j = journal;
        j.sync();
        long before = Files.size(dir.resolve(FileJournal.FILE));
        assertThat(before).isGreaterThan(100_000);
        j.compact(h.scheduler.recovery()::writeTo);
        j.close();
        long after = Files.size(dir.resolve(FileJournal.FILE));
        assertThat(after).isLessThan(before / 10);
        FileJournal replayed = FileJournal.open(dir, FsyncPolicy.NEVER);
        assertThat(replayed.restoredTasks()).isEqualTo(7);
        SchedulerHarness h2 = new SchedulerHarness(new FirstAvailable(), SchedulerConfig.defaults(), replayed);
        replayed.restoreInto(h2.scheduler.recovery());
        FakeLink back = new FakeLink("back");
        h2.scheduler.handle(Event.client(back, new Message.Attach(2, id, secret)));
        h2.scheduler.endBatch();
        replayed.sync();
        assertThat(back.sent(Message.Attached.class).get(0).highestClientTaskId()).isEqualTo(5006);
        // the sequence counter carries on after everything acknowledged was dropped
        FakeLink exec = h2.executor("e2", 7, 7);
        replayed.sync();
        h2.complete(exec, dispatched(exec));
        replayed.close();
        assertThat(SchedulerHarness.delivered(back)).extracting(Message.DeliveredResult::seq).first()
                .isEqualTo(5001L);
    }

    /** A journal holding one leased instance with {@code n} accepted, unfinished tasks. */
    long seed(int n) throws IOException {
        FileJournal journal = FileJournal.open(dir, FsyncPolicy.ALWAYS);
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable(), SchedulerConfig.defaults(), journal);
        FakeLink client = h.client("c", 60);
        journal.close();
        long id = h.instanceOf(client);
        String secret = h.secretOf(client);
        journal = FileJournal.open(dir, FsyncPolicy.ALWAYS);
        h = new SchedulerHarness(new FirstAvailable(), SchedulerConfig.defaults(), journal);
        journal.restoreInto(h.scheduler.recovery());
        FakeLink c = new FakeLink("c");
        h.scheduler.handle(Event.client(c, new Message.Attach(1, id, secret)));
        for (int i = 0; i < n; i++) {
            h.submit(c, id, 1); // one record per batch, so that damage hits exactly the last task
        }
        journal.close();
        return id;
    }

    /** A dispatcher killed with four tasks accepted, none finished; its journal reopened in a fresh harness. */
    private record Restarted(SchedulerHarness h, FileJournal journal, long id, String secret) {
    }

    private Restarted killedWithFourTasks() throws Exception {
        FileJournal journal = FileJournal.open(dir, FsyncPolicy.ALWAYS);
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable(), SchedulerConfig.defaults(), journal);
        FakeLink client = h.client("c", 60);
        journal.sync();
        long id = h.instanceOf(client);
        String secret = h.secretOf(client);
        h.submit(client, id, 4);
        journal.close(); // no executor: all four accepted, none run; the dispatcher dies here
        FileJournal reopened = FileJournal.open(dir, FsyncPolicy.ALWAYS);
        SchedulerHarness after = new SchedulerHarness(new FirstAvailable(), SchedulerConfig.defaults(), reopened);
        reopened.restoreInto(after.scheduler.recovery());
        return new Restarted(after, reopened, id, secret);
    }

    @Test
    void replayedTasksWaitForTheirClientEvenWhenAnExecutorRegistersFirst() throws Exception {
        Restarted r = killedWithFourTasks();
        FakeLink e = r.h().executor("e", 8, 8); // the executors are often back before the client
        r.h().scheduler.endBatch();
        r.journal().sync();
        assertThat(dispatched(e)).as("nothing runs before the client says what it moved").isEmpty();
        assertThat(r.h().scheduler.heldCount()).isEqualTo(4);
        r.h().clock.advanceMillis(io.falkon.dispatcher.core.Recovery.HOLD_MICROS / 1000 - 1);
        assertThat(r.h().scheduler.onTimer()).isFalse();
        r.h().clock.advanceMillis(1);
        assertThat(r.h().scheduler.onTimer()).as("the hold is over: a round is due").isTrue();
        r.h().scheduler.endBatch();
        r.journal().sync();
        assertThat(dispatched(e)).as("no client came back: they run after the hold").hasSize(4);
        r.journal().close();
    }

    @Test
    void attachMovedCancelsTheMovedTasksInTheSameStepAndQueuesTheRest() throws Exception {
        Restarted r = killedWithFourTasks();
        FakeLink e = r.h().executor("e", 8, 8);
        r.h().scheduler.endBatch();
        FakeLink back = new FakeLink("back");
        r.h().scheduler.handle(Event.client(back, new Message.AttachMoved(3, r.id(), r.secret(), new long[]{0, 2, 99})));
        r.h().scheduler.endBatch();
        r.journal().sync();
        assertThat(back.sent(Message.Attached.class)).hasSize(1);
        assertThat(SchedulerHarness.delivered(back)).extracting(Message.DeliveredResult::clientTaskId)
                .as("the moved ones end here at once, cancelled").containsExactlyInAnyOrder(0L, 2L);
        assertThat(SchedulerHarness.delivered(back)).extracting(d -> d.execution().status())
                .containsOnly(io.falkon.protocol.TaskStatus.CANCELLED);
        List<Message.DispatchedTask> ran = dispatched(e);
        assertThat(ran).as("only the tasks the client did not move run here").hasSize(2);
        r.h().complete(e, ran);
        r.journal().sync();
        assertThat(SchedulerHarness.delivered(back)).filteredOn(d -> d.execution().succeeded())
                .extracting(Message.DeliveredResult::clientTaskId).containsExactlyInAnyOrder(1L, 3L);
        assertThat(r.h().scheduler.heldCount()).isZero();
        r.journal().close();

        // the cancellations and results were journaled: a second restart brings none back to run
        FileJournal again = FileJournal.open(dir, FsyncPolicy.ALWAYS);
        assertThat(again.restoredTasks()).as("all four have their final result").isZero();
        again.close();
    }

    @Test
    void aJournalCompactedWhileTasksAreHeldKeepsThem() throws Exception {
        Restarted r = killedWithFourTasks();
        r.journal().compact(r.h().scheduler.recovery()::writeTo);
        r.journal().close();
        FileJournal again = FileJournal.open(dir, FsyncPolicy.ALWAYS);
        assertThat(again.restoredTasks()).isEqualTo(4);
        again.close();
    }
}
