package io.falkon.dispatcher.core;

import io.falkon.protocol.Execution;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What every {@link Journal} must do for the scheduler, whatever it keeps: run each batch's sends
 * exactly once, in the order the batches were committed (replies and results must not overtake
 * one another), whether or not the batch recorded anything, and across a compaction. One subclass
 * per implementation (and, for the file journal, per fsync policy). What survives a restart is the
 * durable journals' own test (FileJournalTest): {@link Journal#NONE} keeps nothing by design.
 */
public abstract class JournalContract {
    private Journal journal;
    private final List<Integer> sent = new CopyOnWriteArrayList<>();

    /** A new, empty journal. */
    protected abstract Journal open() throws Exception;

    /** Releases it (closes its files, stops its thread). */
    protected void close(Journal journal) throws Exception {
    }

    @BeforeEach
    void openJournal() throws Exception {
        journal = open();
    }

    @AfterEach
    void closeJournal() throws Exception {
        close(journal);
    }

    private static InstanceRecord instance(long id) {
        return new InstanceRecord(id, "contract-" + id, "0123456789abcdef0123456789abcdef", 60, 1_000_000, 0,
                new long[0]);
    }

    private static Message.DeliveredResult result(long clientTaskId, long seq) {
        return new Message.DeliveredResult(clientTaskId, seq, 1, "e1", 1, 2, 3,
                Execution.of(TaskStatus.EXITED, "", 3));
    }

    /** One batch as the scheduler writes it: an instance, its tasks accepted, some finished, then the commit. */
    private void batch(int n) {
        long id = n + 1;
        journal.instanceCreated(instance(id));
        for (int t = 0; t < 3; t++) {
            journal.accepted(id, t, 1, new byte[]{1, 2, (byte) t});
        }
        journal.completed(id, result(0, 1));
        journal.produced(id, new String[]{"out-" + n}, null, true, 0);
        journal.acked(id, 1);
        journal.commit(() -> sent.add(n));
    }

    private List<Integer> upTo(int n) {
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            all.add(i);
        }
        return all;
    }

    @Test
    void everyBatchIsSentOnceInTheOrderOfItsCommit() {
        for (int n = 0; n < 200; n++) {
            batch(n);
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> sent.size() >= 200);
        assertThat(sent).containsExactlyElementsOf(upTo(200));
    }

    @Test
    void aBatchThatRecordedNothingIsSentToo() {
        batch(0);
        journal.commit(() -> sent.add(1)); // an ACK-less, record-less batch (a STATUS reply)
        batch(2);
        await().atMost(Duration.ofSeconds(30)).until(() -> sent.size() >= 3);
        assertThat(sent).containsExactly(0, 1, 2);
    }

    @Test
    void aCompactionBetweenBatchesLosesNoSendAndKeepsTheirOrder() {
        batch(0);
        journal.compact(snapshot -> {
            snapshot.instanceCreated(instance(1));
            snapshot.completed(1, result(0, 1));
        });
        batch(1);
        journal.destroyed(1);
        journal.commit(() -> sent.add(2));
        await().atMost(Duration.ofSeconds(30)).until(() -> sent.size() >= 3);
        assertThat(sent).containsExactly(0, 1, 2);
    }
}
