package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Execution;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskStatus;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static io.falkon.dispatcher.core.SchedulerHarness.delivered;
import static io.falkon.dispatcher.core.SchedulerHarness.dispatched;
import static org.assertj.core.api.Assertions.assertThat;

/** Replay, dispatch timeouts, suspension, leases, acknowledgements and backpressure, on a fake clock. */
class ReliabilityTest {

    static Execution status(TaskStatus s, int exit) {
        return new Execution(s, exit, 0, 1, 2, new byte[0], new byte[0], "", ExtField.NONE);
    }

    @Test
    void frameworkFailuresAreRetriedElsewhereButApplicationFailuresAreDelivered() {
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable());
        FakeLink a = h.executor("a", 4, 4);
        FakeLink b = h.executor("b", 4, 0); // full at first: every first attempt lands on a
        FakeLink client = h.client("c");
        h.submit(client, 4);
        List<Message.DispatchedTask> first = dispatched(a);
        assertThat(first).hasSize(4);
        h.finish(a, first.subList(0, 1), status(TaskStatus.REJECTED, -1));
        h.finish(a, first.subList(1, 2), status(TaskStatus.LAUNCH_FAILED, -1));
        h.finish(a, first.subList(2, 3), status(TaskStatus.EXITED, 1));
        h.finish(a, first.subList(3, 4), status(TaskStatus.TIMEOUT, -1));
        List<Message.DeliveredResult> got = delivered(client);
        assertThat(got).extracting(r -> r.execution().status()).containsExactlyInAnyOrder(TaskStatus.EXITED,
                TaskStatus.TIMEOUT);
        assertThat(dispatched(a)).as("a has credits again, but the retries wait for b").isEmpty();
        h.scheduler.handle(Event.executor(b, new Message.Credit(4)));
        h.scheduler.endBatch();
        List<Message.DispatchedTask> again = dispatched(b);
        assertThat(again).hasSize(2).extracting(Message.DispatchedTask::attempt).containsOnly(1);
        h.complete(b, again);
        assertThat(delivered(client)).hasSize(4);
    }

    @Test
    void aTaskIsRetriedAtMostItsRetryLimitTimes() {
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable());
        FakeLink a = h.executor("a", 1, 1);
        FakeLink client = h.client("c");
        h.submit(client, 1, TaskSpec.builder("x").retries(2).build());
        int attempts = 0;
        List<Message.DispatchedTask> t;
        while (!(t = dispatched(a)).isEmpty()) {
            attempts++;
            h.finish(a, t, status(TaskStatus.REJECTED, -1));
        }
        assertThat(attempts).isEqualTo(3);
        List<Message.DeliveredResult> got = delivered(client);
        assertThat(got).hasSize(1);
        assertThat(got.get(0).execution().status()).isEqualTo(TaskStatus.REJECTED);
        assertThat(got.get(0).attempt()).isEqualTo(2);
    }

    @Test
    void aTaskThatFailsOnItsOwnRunsAgainElsewhereForItsRetriesAndOnlyItsLastResultIsDelivered() {
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable());
        FakeLink a = h.executor("a", 1, 1);
        FakeLink b = h.executor("b", 1, 1);
        FakeLink client = h.client("c");
        h.submit(client, 1, TaskSpec.builder("flaky").retriesOnFailure(2).retries(0).build());
        List<String> ranOn = new ArrayList<>();
        int[] exits = {1, 137, 0}; // fails, times out, then succeeds
        TaskStatus[] statuses = {TaskStatus.EXITED, TaskStatus.TIMEOUT, TaskStatus.EXITED};
        for (int i = 0; i < 3; i++) {
            List<Message.DispatchedTask> onA = dispatched(a);
            List<Message.DispatchedTask> onB = dispatched(b);
            FakeLink on = onA.isEmpty() ? b : a;
            List<Message.DispatchedTask> t = onA.isEmpty() ? onB : onA;
            assertThat(t).as("attempt %d", i).hasSize(1);
            assertThat(t.get(0).attempt()).isEqualTo(i);
            assertThat(delivered(client)).as("nothing delivered before the last attempt").isEmpty();
            ranOn.add(on == a ? "a" : "b");
            h.finish(on, t, status(statuses[i], exits[i]));
        }
        assertThat(ranOn).as("each retry goes to the executor it did not just fail on").containsExactly("a", "b", "a");
        List<Message.DeliveredResult> got = delivered(client);
        assertThat(got).hasSize(1);
        assertThat(got.get(0).execution().succeeded()).isTrue();
        assertThat(got.get(0).attempt()).isEqualTo(2);
        // its own failures do not use up the framework's retries (0 here): the retries all ran
    }

    @Test
    void aTaskWhoseRetriesOnFailureAreUsedUpIsDeliveredAsItsLastFailure() {
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable());
        FakeLink a = h.executor("a", 1, 1);
        FakeLink client = h.client("c");
        h.submit(client, 1, TaskSpec.builder("broken").retriesOnFailure(1).build());
        h.finish(a, dispatched(a), status(TaskStatus.EXITED, 3));
        h.finish(a, dispatched(a), status(TaskStatus.EXITED, 4));
        assertThat(dispatched(a)).isEmpty();
        List<Message.DeliveredResult> got = delivered(client);
        assertThat(got).extracting(r -> r.execution().exitCode()).containsExactly(4);
        assertThat(got.get(0).attempt()).isEqualTo(1);
    }

    @Test
    void aDispatchWithoutAResultInTimeIsCancelledAndRetriedAndItsLateResultIgnored() {
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable());
        FakeLink slow = h.executor("slow", 1, 1);
        FakeLink client = h.client("c");
        h.submit(client, 1, TaskSpec.builder("sleep", "1").wallTime(Duration.ofSeconds(1)).build());
        List<Message.DispatchedTask> t = dispatched(slow);
        h.clock.advanceMillis(1000 + 60_000 - 1);
        h.scheduler.onTimer();
        h.scheduler.endBatch();
        assertThat(slow.sent(Message.Cancel.class)).isEmpty();
        h.clock.advanceMillis(2);
        h.scheduler.onTimer();
        h.scheduler.endBatch();
        assertThat(slow.sent(Message.Cancel.class)).hasSize(1);
        assertThat(h.scheduler.queuedCount()).as("re-queued, waiting for a credit").isEqualTo(1);
        // the executor kills it and answers late: ignored, but the credit comes back and the retry goes out
        slow.drain();
        h.finish(slow, t, status(TaskStatus.CANCELLED, -1));
        assertThat(h.scheduler.staleResults()).isEqualTo(1);
        assertThat(delivered(client)).isEmpty();
        List<Message.DispatchedTask> retry = dispatched(slow);
        assertThat(retry).hasSize(1);
        assertThat(retry.get(0).attempt()).isEqualTo(1);
        h.complete(slow, retry);
        assertThat(delivered(client)).hasSize(1).allSatisfy(r -> assertThat(r.execution().succeeded()).isTrue());
    }

    @Test
    void anExecutorThatFailsEverythingWhileOthersSucceedIsSuspendedAndComesBack() {
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable(),
                SchedulerConfig.defaults().withSuspension(5, 60_000, 120_000), Journal.NONE);
        FakeLink bad = h.executor("bad", 1, 1);
        FakeLink good = h.executor("good", 1, 1);
        FakeLink client = h.client("c");
        h.submit(client, 40);
        int badFailures = 0;
        for (int round = 0; round < 100 && delivered(client).size() < 40; round++) {
            List<Message.DispatchedTask> b = dispatched(bad);
            if (!b.isEmpty()) {
                badFailures++;
                h.finish(bad, b, status(TaskStatus.LAUNCH_FAILED, -1)); // the node cannot start anything
            }
            h.complete(good, dispatched(good));
            h.clock.advanceMillis(10);
        }
        assertThat(delivered(client)).hasSize(40).allSatisfy(r -> assertThat(r.execution().succeeded()).isTrue());
        assertThat(badFailures).isEqualTo(5);
        assertThat(h.scheduler.suspended("bad")).isTrue();
        assertThat(h.scheduler.snapshot().executors()).filteredOn(e -> e.id().equals("bad"))
                .singleElement().satisfies(e -> assertThat(e.suspended()).isTrue());

        h.clock.advanceMillis(120_000);
        h.scheduler.onTimer();
        h.submit(client, 2);
        assertThat(h.scheduler.suspended("bad")).isFalse();
        assertThat(dispatched(bad)).hasSize(1);
    }

    @Test
    void nobodyIsSuspendedWhenTasksFailEverywhere() {
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable(),
                SchedulerConfig.defaults().withSuspension(5, 60_000, 120_000), Journal.NONE);
        FakeLink a = h.executor("a", 2, 2);
        FakeLink b = h.executor("b", 2, 2);
        FakeLink client = h.client("c");
        h.submit(client, 30, TaskSpec.of("false"));
        while (delivered(client).size() < 30) {
            h.finish(a, dispatched(a), status(TaskStatus.EXITED, 1));
            h.finish(b, dispatched(b), status(TaskStatus.EXITED, 1));
        }
        assertThat(h.scheduler.suspended("a")).isFalse();
        assertThat(h.scheduler.suspended("b")).isFalse();
    }

    @Test
    void anInstanceWithALeaseOutlivesItsClientAndRedeliversWhatWasNotAcknowledged() {
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable());
        FakeLink e = h.executor("e", 4, 4);
        FakeLink client = h.client("c", 60);
        long id = h.instanceOf(client);
        String secret = h.secretOf(client);
        h.submit(client, 4);
        List<Message.DispatchedTask> t = dispatched(e);
        h.complete(e, t.subList(0, 2));
        List<Message.DeliveredResult> firstTwo = delivered(client);
        assertThat(firstTwo).extracting(Message.DeliveredResult::seq).containsExactly(1L, 2L);
        h.scheduler.handle(Event.client(client, new Message.Ack(id, 1)));
        h.scheduler.handle(Event.gone(client, false));
        h.scheduler.endBatch();
        assertThat(h.scheduler.instanceCount()).isEqualTo(1);
        h.complete(e, t.subList(2, 4)); // finishes while nobody is attached

        FakeLink again = new FakeLink("again");
        h.scheduler.handle(Event.client(again, new Message.Attach(9, id, secret)));
        h.scheduler.endBatch();
        Message.Attached attached = again.sent(Message.Attached.class).get(0);
        assertThat(attached.highestClientTaskId()).isEqualTo(3);
        assertThat(attached.redelivered()).isEqualTo(3);
        assertThat(again.sent.get(0)).isInstanceOf(Message.Attached.class);
        assertThat(delivered(again)).extracting(Message.DeliveredResult::seq).containsExactly(2L, 3L, 4L);
        // the new connection owns it now
        h.submit(again, id, 1);
        assertThat(again.sent(Message.Submitted.class)).hasSize(1);
    }

    @Test
    void aDetachedInstanceIsDestroyedWhenItsLeaseRunsOut() {
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable());
        FakeLink e = h.executor("e", 1, 1);
        FakeLink client = h.client("c", 30);
        long id = h.instanceOf(client);
        String secret = h.secretOf(client);
        h.submit(client, 3);
        h.scheduler.handle(Event.gone(client, false));
        h.clock.advanceMillis(29_999);
        h.scheduler.onTimer();
        assertThat(h.scheduler.instanceCount()).isEqualTo(1);
        h.clock.advanceMillis(2);
        h.scheduler.onTimer();
        h.scheduler.endBatch();
        assertThat(h.scheduler.instanceCount()).isZero();
        assertThat(h.scheduler.queuedCount()).isZero();
        assertThat(e.sent(Message.Cancel.class)).hasSize(1);
        FakeLink late = new FakeLink("late");
        h.scheduler.handle(Event.client(late, new Message.Attach(1, id, secret)));
        h.scheduler.endBatch();
        assertThat(late.sent(Message.ErrorMessage.class).get(0).errorCode()).isEqualTo(ErrorCode.UNKNOWN_INSTANCE);
    }

    @Test
    void withoutALeaseAnInstanceDiesWithItsConnection() {
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable());
        FakeLink client = h.client("c", 0);
        h.submit(client, 3);
        h.scheduler.handle(Event.gone(client, false));
        assertThat(h.scheduler.instanceCount()).isZero();
    }

    @Test
    void overTheMemoryBudgetBundlesAreRefusedBusyAndAcceptedAgainOnceItDrains() {
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable(),
                SchedulerConfig.defaults().withMemoryBudgetBytes(1 << 20), Journal.NONE);
        FakeLink client = h.client("c", 60);
        FakeLink other = h.client("other", 60);
        long clientInstance = h.instanceOf(client);
        long otherInstance = h.instanceOf(other);
        h.submit(client, 10_000); // ~170 bytes each: over 1 MiB
        assertThat(h.scheduler.queuedCount()).isEqualTo(10_000);
        client.sent.clear();
        other.sent.clear();
        h.submit(other, otherInstance, 10);
        h.submit(client, clientInstance, 10);
        for (FakeLink c : List.of(client, other)) {
            assertThat(c.sent).as(c.remote()).hasSize(1);
            Message.ErrorMessage busy = c.sent(Message.ErrorMessage.class).get(0);
            assertThat(busy.errorCode()).isEqualTo(ErrorCode.BUSY);
            assertThat(busy.message()).contains("memory budget").contains("send it again later");
            assertThat(c.closed).as("a request error: the connection stays").isFalse();
        }
        assertThat(h.scheduler.queuedCount()).as("nothing of a refused bundle is queued").isEqualTo(10_000);
        assertThat(h.scheduler.refusingBundles()).isTrue();
        FakeLink e = h.executor("e", 10_000, 10_000);
        h.complete(e, dispatched(e));
        h.scheduler.handle(Event.client(client, new Message.Ack(clientInstance, Long.MAX_VALUE)));
        h.scheduler.endBatch();
        assertThat(h.scheduler.refusingBundles()).isFalse();
        other.sent.clear();
        h.submit(other, otherInstance, 10);
        assertThat(other.sent(Message.Submitted.class)).hasSize(1);
        assertThat(h.scheduler.snapshot().refusedBundles()).isEqualTo(2);
    }

    @Test
    void resultsAwaitingAcknowledgementOverHalfTheBudgetHoldDispatchUntilAcked() {
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable(),
                SchedulerConfig.defaults().withMemoryBudgetBytes(1 << 20), Journal.NONE);
        FakeLink client = h.client("c", 60); // a lease: results are kept until acknowledged
        FakeLink e = h.executor("e", 8, 8);
        h.submit(client, 100);
        byte[] out = new byte[100_000];
        for (int round = 0; round < 8 && !h.scheduler.holdingDispatch(); round++) {
            List<Message.DispatchedTask> ts = dispatched(e);
            h.finish(e, ts, new Execution(TaskStatus.EXITED, 0, 0, 1, 2, out, new byte[0], "", ExtField.NONE));
        }
        assertThat(h.scheduler.holdingDispatch()).as("~100 KB results, unacknowledged").isTrue();
        e.sent.clear();
        h.scheduler.endBatch();
        assertThat(dispatched(e)).as("credits, queued tasks, but nothing dispatched").isEmpty();
        h.scheduler.handle(Event.client(client, new Message.Ack(h.instanceOf(client), Long.MAX_VALUE)));
        h.scheduler.endBatch();
        assertThat(h.scheduler.holdingDispatch()).isFalse();
        assertThat(dispatched(e)).isNotEmpty();
    }

    @Test
    void theJournalSeesWhatMustSurviveAndRepliesWaitForTheCommit() {
        RecordingJournal journal = new RecordingJournal();
        SchedulerHarness h = new SchedulerHarness(new FirstAvailable(), SchedulerConfig.defaults(), journal);
        FakeLink e = h.executor("e", 2, 2);
        journal.holdCommits = true;
        FakeLink client = h.client("c", 60);
        assertThat(client.sent).as("reply held until the journal commits").isEmpty();
        journal.release();
        long id = h.instanceOf(client);
        String secret = h.secretOf(client);
        journal.holdCommits = false;
        h.submit(client, 2);
        h.complete(e, dispatched(e));
        h.scheduler.handle(Event.client(client, new Message.Ack(id, 2)));
        h.scheduler.handle(Event.client(client, new Message.Destroy(5, id)));
        h.scheduler.endBatch();
        assertThat(journal.records).containsExactly("instance " + id, "accepted " + id + "/0", "accepted " + id + "/1",
                "completed " + id + "/0#1", "completed " + id + "/1#2", "acked " + id + "@2", "destroyed " + id);
        // instances without a lease are not journaled
        FakeLink plain = h.client("plain", 0);
        h.submit(plain, 1);
        assertThat(journal.records).hasSize(7);
    }

    /** Records what the scheduler journals; can hold commits to check replies wait for them. */
    static final class RecordingJournal implements Journal {
        final List<String> records = new ArrayList<>();
        final List<Runnable> held = new ArrayList<>();
        boolean holdCommits;

        void release() {
            held.forEach(Runnable::run);
            held.clear();
        }

        @Override
        public void instanceCreated(InstanceRecord instance) {
            records.add("instance " + instance.id());
        }

        @Override
        public void accepted(long instanceId, long clientTaskId, long submittedMicros, byte[] spec) {
            records.add("accepted " + instanceId + "/" + clientTaskId);
        }

        @Override
        public void completed(long instanceId, Message.DeliveredResult result) {
            records.add("completed " + instanceId + "/" + result.clientTaskId() + "#" + result.seq());
        }

        @Override
        public void acked(long instanceId, long upToSeq) {
            records.add("acked " + instanceId + "@" + upToSeq);
        }

            @Override
            public void produced(long instanceId, String[] objectIds, String name, boolean ok, long failedProducer) {
                records.add("produced " + instanceId);
            }

        @Override
        public void destroyed(long instanceId) {
            records.add("destroyed " + instanceId);
        }

        @Override
        public void commit(Runnable send) {
            if (holdCommits) {
                held.add(send);
            } else {
                send.run();
            }
        }
    }
}
