package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskStatus;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import static io.falkon.dispatcher.core.SchedulerHarness.delivered;
import static io.falkon.dispatcher.core.SchedulerHarness.dispatched;
import static org.assertj.core.api.Assertions.assertThat;

class SchedulerTest {
    final SchedulerHarness h = new SchedulerHarness(new FirstAvailable());
    final Scheduler s = h.scheduler;

    @Test
    void dispatchesNoMoreThanTheCreditsAsOneBundleAndPiggyBackedCreditsBringMore() {
        FakeLink exec = h.executor("e1", 4, 4);
        FakeLink client = h.client("c");
        h.submit(client, 10);

        List<Message.Dispatch> bundles = exec.sent(Message.Dispatch.class);
        assertThat(bundles).hasSize(1);
        assertThat(bundles.get(0).tasks()).hasSize(4);
        List<Message.DispatchedTask> first = dispatched(exec);
        assertThat(s.queuedCount()).isEqualTo(6);
        assertThat(s.runningCount()).isEqualTo(4);

        // two results, two credits back: exactly two more go out, in one bundle
        h.complete(exec, first.subList(0, 2));
        List<Message.DispatchedTask> second = dispatched(exec);
        assertThat(second).hasSize(2);
        assertThat(second).extracting(Message.DispatchedTask::taskId)
                .doesNotContainAnyElementsOf(first.stream().map(Message.DispatchedTask::taskId).toList());
        assertThat(delivered(client)).hasSize(2);
    }

    @Test
    void anExecutorWithoutCreditsGetsNothing() {
        FakeLink exec = h.executor("e1", 4, 0);
        FakeLink client = h.client("c");
        h.submit(client, 3);
        assertThat(exec.sent(Message.Dispatch.class)).isEmpty();
        s.handle(Event.executor(exec, new Message.Credit(1)));
        s.endBatch();
        assertThat(dispatched(exec)).hasSize(1);
    }

    @Test
    void firstAvailableSpreadsASmallRoundOverAllFreeExecutors() {
        FakeLink a = h.executor("a", 4, 4);
        FakeLink b = h.executor("b", 4, 4);
        FakeLink client = h.client("c");
        h.submit(client, 4);
        assertThat(dispatched(a)).hasSize(2);
        assertThat(dispatched(b)).hasSize(2);
    }

    @Test
    void everyTaskGetsExactlyOneResultWithTheDispatchersTimestamps() {
        FakeLink exec = h.executor("e1", 2, 2);
        FakeLink client = h.client("c");
        List<Long> ids = h.submit(client, 7);
        h.clock.advanceMillis(5);
        int rounds = 0;
        List<Message.DispatchedTask> batch;
        while (!(batch = dispatched(exec)).isEmpty()) {
            h.clock.advanceMillis(1);
            h.complete(exec, batch);
            rounds++;
        }
        assertThat(rounds).isEqualTo(4);
        List<Message.DeliveredResult> results = delivered(client);
        assertThat(results).extracting(Message.DeliveredResult::clientTaskId).containsExactlyInAnyOrderElementsOf(ids);
        Message.DeliveredResult r = results.get(0);
        assertThat(r.executorId()).isEqualTo("e1");
        assertThat(r.submittedMicros()).isEqualTo(1_000_000_000L);
        assertThat(r.dispatchedMicros()).isGreaterThanOrEqualTo(r.submittedMicros());
        assertThat(r.completedMicros()).isGreaterThan(r.submittedMicros());
        assertThat(r.execution().succeeded()).isTrue();
        assertThat(s.runningCount()).isZero();
        assertThat(s.queuedCount()).isZero();
    }

    @Test
    void resultsAreDeliveredInOneFramePerBatchAndEveryLinkIsFlushedOncePerBatch() {
        FakeLink exec = h.executor("e1", 100, 100);
        FakeLink client = h.client("c");
        h.submit(client, 100);
        List<Message.DispatchedTask> all = dispatched(exec);
        int flushesBefore = client.flushes;
        client.drain();
        h.complete(exec, all);
        assertThat(client.sent(Message.Deliver.class)).hasSize(1);
        assertThat(client.sent(Message.Deliver.class).get(0).results()).hasSize(100);
        assertThat(client.flushes).isEqualTo(flushesBefore + 1);
    }

    @Test
    void instancesAreIsolated() {
        FakeLink exec = h.executor("e1", 8, 8);
        FakeLink alice = h.client("alice");
        FakeLink bob = h.client("bob");
        long bobsInstance = h.instanceOf(bob);
        h.submit(alice, 3);
        h.submit(bob, 2);
        h.complete(exec, dispatched(exec));
        assertThat(delivered(alice)).hasSize(3);
        assertThat(delivered(bob)).hasSize(2);

        // alice cannot submit to, look at or destroy bob's instance
        alice.drain();
        h.submit(alice, bobsInstance, 1);
        s.handle(Event.client(alice, new Message.StatusRequest(50, bobsInstance)));
        s.handle(Event.client(alice, new Message.Destroy(51, bobsInstance)));
        s.endBatch();
        List<Message.ErrorMessage> errors = alice.sent(Message.ErrorMessage.class);
        assertThat(errors).hasSize(3).allSatisfy(e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.UNKNOWN_INSTANCE));
        assertThat(s.queuedCount()).isZero();
        assertThat(s.instanceCount()).isEqualTo(2);
    }

    @Test
    void destroyCancelsQueuedAndRunningTasksBeforeReplyingAndLateResultsAreIgnored() {
        FakeLink exec = h.executor("e1", 2, 2);
        FakeLink client = h.client("c");
        long instance = h.instanceOf(client);
        h.submit(client, 5);
        List<Message.DispatchedTask> running = dispatched(exec);
        assertThat(running).hasSize(2);
        client.drain();

        s.handle(Event.client(client, new Message.Destroy(99, instance)));
        s.endBatch();
        List<Message> replies = client.drain();
        assertThat(replies.get(replies.size() - 1)).isEqualTo(new Message.Destroyed(99, instance, 5));
        List<Message.DeliveredResult> cancelled = replies.stream().filter(m -> m instanceof Message.Deliver)
                .flatMap(m -> ((Message.Deliver) m).results().stream()).collect(Collectors.toList());
        assertThat(cancelled).hasSize(5)
                .allSatisfy(r -> assertThat(r.execution().status()).isEqualTo(TaskStatus.CANCELLED));
        Message.Cancel cancel = exec.sent(Message.Cancel.class).get(0);
        assertThat(cancel.taskIds()).containsExactlyInAnyOrder(
                running.stream().mapToLong(Message.DispatchedTask::taskId).toArray());

        // the executor's late results carry credits back but deliver nothing
        h.complete(exec, running);
        assertThat(client.sent(Message.Deliver.class)).isEmpty();
        assertThat(s.staleResults()).isEqualTo(2);
        FakeLink other = h.client("other");
        h.submit(other, 2);
        assertThat(dispatched(exec)).hasSize(2);
    }

    @Test
    void aLostExecutorsTasksRunAgainElsewhereAndTheClientSeesOneResultEach() {
        FakeLink doomed = h.executor("doomed", 3, 3);
        FakeLink client = h.client("c");
        List<Long> ids = h.submit(client, 3);
        assertThat(dispatched(doomed)).hasSize(3);
        s.handle(Event.gone(doomed, true));
        s.endBatch();
        assertThat(delivered(client)).isEmpty();
        assertThat(s.queuedCount()).isEqualTo(3);
        FakeLink healthy = h.executor("healthy", 3, 3);
        List<Message.DispatchedTask> again = dispatched(healthy);
        assertThat(again).extracting(Message.DispatchedTask::attempt).containsOnly(1);
        h.complete(healthy, again);
        assertThat(delivered(client)).extracting(Message.DeliveredResult::clientTaskId)
                .containsExactlyInAnyOrderElementsOf(ids);
        assertThat(delivered(client)).allSatisfy(r -> {
            assertThat(r.execution().succeeded()).isTrue();
            assertThat(r.attempt()).isEqualTo(1);
            assertThat(r.executorId()).isEqualTo("healthy");
        });
        assertThat(s.retried()).isEqualTo(3);
    }

    @Test
    void aTaskWithoutRetriesLeftIsReportedAsExecutorLost() {
        FakeLink exec = h.executor("e1", 1, 1);
        FakeLink client = h.client("c");
        h.submit(client, 1, TaskSpec.builder("/bin/true").retries(0).build());
        assertThat(dispatched(exec)).hasSize(1);
        s.handle(Event.gone(exec, true));
        s.endBatch();
        assertThat(delivered(client)).hasSize(1)
                .allSatisfy(r -> assertThat(r.execution().status()).isEqualTo(TaskStatus.EXECUTOR_LOST));
        assertThat(s.runningCount()).isZero();
        assertThat(s.queuedCount()).isZero();
    }

    @Test
    void aDisconnectedClientsInstancesAreDestroyed() {
        FakeLink exec = h.executor("e1", 1, 1);
        FakeLink client = h.client("c");
        h.submit(client, 4);
        s.handle(Event.gone(client, false));
        s.endBatch();
        assertThat(s.instanceCount()).isZero();
        assertThat(s.queuedCount()).isZero();
        assertThat(exec.sent(Message.Cancel.class)).hasSize(1);
    }

    @Test
    void anExecutorRegisteringAgainReplacesItsOldConnection() {
        FakeLink first = h.executor("same", 1, 1);
        FakeLink client = h.client("c");
        h.submit(client, 1);
        assertThat(dispatched(first)).hasSize(1);
        FakeLink second = h.executor("same", 1, 1); // reconnected before the old link was noticed dead
        assertThat(first.closed).isTrue();
        assertThat(first.closedWith.errorCode()).isEqualTo(ErrorCode.DUPLICATE_EXECUTOR);
        assertThat(second.closed).isFalse();
        assertThat(s.executorCount()).isEqualTo(1);
        List<Message.DispatchedTask> retried = dispatched(second);
        assertThat(retried).hasSize(1);
        h.complete(second, retried);
        assertThat(delivered(client)).hasSize(1);
    }

    @Test
    void zeroSlotsAndCreditBeforeRegisterAreProtocolErrors() {
        FakeLink zero = new FakeLink("zero");
        s.handle(Event.executor(zero, new Message.Register("z", "h", 0, 0, Map.of())));
        assertThat(zero.closedWith.message()).contains("slots");
        FakeLink early = new FakeLink("early");
        s.handle(Event.executor(early, new Message.Credit(3)));
        assertThat(early.closedWith.errorCode()).isEqualTo(ErrorCode.UNEXPECTED_MESSAGE);
    }

    @Test
    void anAdvertisedMemoryOrDiskThatIsNotANumberRefusesTheRegistrationNamingItAndOthersGoOn() {
        for (String attribute : List.of("memoryMiB", "diskMiB")) {
            FakeLink bad = new FakeLink("bad-" + attribute);
            s.handle(Event.executor(bad, new Message.Register("b-" + attribute, "h", 2, 0, Map.of(attribute, "lots"))));
            assertThat(bad.closedWith.message())
                    .isEqualTo("REGISTER.attributes." + attribute + ": must be a number of MiB, got 'lots'");
        }
        FakeLink good = h.executor("good", 2, 2, 4096, 1000);
        FakeLink client = h.client("c");
        h.submitAll(client, List.of(TaskSpec.builder("/bin/true").disk(600).build()));
        assertThat(dispatched(good)).hasSize(1);
    }

    @Test
    void afterShutdownNewWorkIsRefused() {
        FakeLink client = h.client("c");
        s.shutDown(true);
        h.submit(client, 1);
        assertThat(client.sent(Message.ErrorMessage.class)).extracting(Message.ErrorMessage::errorCode)
                .containsExactly(ErrorCode.SHUTTING_DOWN);
        assertThat(s.queuedCount()).isZero();
    }

    @Test
    void statusDescribesTheDispatcherAndAnInstance() {
        FakeLink exec = h.executor("e1", 4, 4);
        FakeLink client = h.client("c");
        h.submit(client, 6);
        h.clock.advanceMillis(2500);
        StatusSnapshot st = s.snapshot();
        assertThat(st.queued()).isEqualTo(2);
        assertThat(st.running()).isEqualTo(4);
        assertThat(st.executorsRegistered()).isEqualTo(1);
        assertThat(st.slots()).isEqualTo(4);
        assertThat(st.executors()).extracting(StatusSnapshot.ExecutorRow::id).containsExactly("e1");
        assertThat(st.uptimeSeconds()).isEqualTo(2.5);

        // the reply carries what the renderer made of the instance's row
        s.handle(Event.client(client, new Message.StatusRequest(77, h.instanceOf(client))));
        s.endBatch();
        Message.Status reply = client.sent(Message.Status.class).get(0);
        assertThat(reply.requestId()).isEqualTo(77);
        StatusSnapshot.InstanceRow in = h.renderedRows.get(0);
        assertThat(reply.json()).isEqualTo(StatusRenderer.RECORDS.instance(in));
        assertThat(in.queued()).isEqualTo(2);
        assertThat(in.running()).isEqualTo(4);
        assertThat(in.name()).isEqualTo("c");
        assertThat(exec.closed).isFalse();
    }

    @Test
    void aResultFromTheWrongExecutorOrAttemptIsIgnored() {
        FakeLink a = h.executor("a", 1, 1);
        FakeLink b = h.executor("b", 1, 0);
        FakeLink client = h.client("c");
        h.submit(client, 1);
        List<Message.DispatchedTask> t = dispatched(a);
        h.complete(b, t);
        assertThat(delivered(client)).isEmpty();
        s.handle(Event.executor(a, new Message.Result(0, List.of(new Message.TaskResult(t.get(0).taskId(), 7,
                SchedulerHarness.exited(0))))));
        s.endBatch();
        assertThat(delivered(client)).isEmpty();
        h.complete(a, t);
        assertThat(delivered(client)).hasSize(1);
    }
}
