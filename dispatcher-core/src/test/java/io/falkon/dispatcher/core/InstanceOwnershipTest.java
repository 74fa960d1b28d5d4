package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskSpecCodec;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.falkon.dispatcher.core.SchedulerHarness.delivered;
import static io.falkon.dispatcher.core.SchedulerHarness.dispatched;
import static org.assertj.core.api.Assertions.assertThat;
import java.util.ArrayList;

/** An instance belongs to whoever holds its secret; client task ids are unique, and a re-sent bundle is not run twice. */
class InstanceOwnershipTest {
    final SchedulerHarness h = new SchedulerHarness(new FirstAvailable());

    private void submit(FakeLink client, long instance, long requestId, long... ids) {
        byte[] spec = TaskSpecCodec.encode(TaskSpec.of("/bin/true"));
        List<Message.SubmittedTask> tasks = new ArrayList<>();
        TaskSpecCodec.Scan[] scans = new TaskSpecCodec.Scan[ids.length];
        for (int i = 0; i < ids.length; i++) {
            tasks.add(new Message.SubmittedTask(ids[i], spec));
            scans[i] = TaskSpecCodec.scan(spec);
        }
        h.scheduler.handle(Event.submit(client, new Message.Submit(requestId, instance, tasks), scans));
        h.scheduler.endBatch();
    }

    @Test
    void anotherClientWithOnlyTheIdCannotAttachAndSeesNothing() {
        FakeLink e = h.executor("e", 1, 1);
        FakeLink a = h.client("a", 60);
        long id = h.instanceOf(a);
        h.submit(a, 1, TaskSpec.shell("echo private"));
        h.complete(e, dispatched(e));
        assertThat(delivered(a)).hasSize(1);

        FakeLink b = new FakeLink("b");
        h.scheduler.handle(Event.client(b, new Message.Attach(1, id, "")));
        h.scheduler.handle(Event.client(b, new Message.Attach(2, id, "00000000000000000000000000000000")));
        h.scheduler.endBatch();
        assertThat(b.sent(Message.ErrorMessage.class)).hasSize(2)
                .allSatisfy(err -> assertThat(err.errorCode()).isEqualTo(ErrorCode.UNKNOWN_INSTANCE));
        assertThat(delivered(b)).isEmpty();
        // and B cannot use or destroy it either
        h.submit(b, id, 1);
        h.scheduler.handle(Event.client(b, new Message.Destroy(9, id)));
        h.scheduler.endBatch();
        assertThat(b.sent(Message.ErrorMessage.class)).hasSize(4);
        assertThat(h.scheduler.instanceCount()).isEqualTo(1);
        // the owner still is the owner
        h.submit(a, id, 1);
        assertThat(a.sent(Message.Submitted.class)).hasSize(2);
    }

    @Test
    void theSecretTakesAnInstanceOver() {
        FakeLink e = h.executor("e", 1, 1);
        FakeLink a = h.client("a", 60);
        long id = h.instanceOf(a);
        String secret = h.secretOf(a);
        assertThat(secret).hasSize(32).matches("[0-9a-f]+");
        h.submit(a, 1);
        h.scheduler.handle(Event.gone(a, false));
        h.complete(e, dispatched(e));
        FakeLink b = new FakeLink("b");
        h.scheduler.handle(Event.client(b, new Message.Attach(1, id, secret)));
        h.scheduler.endBatch();
        assertThat(b.sent(Message.Attached.class)).hasSize(1);
        assertThat(delivered(b)).hasSize(1);
    }

    @Test
    void secretsDifferBetweenInstances() {
        assertThat(h.secretOf(h.client("a"))).isNotEqualTo(h.secretOf(h.client("b")));
    }

    @Test
    void aReusedTaskIdIsRefusedAndNothingOfItsBundleIsQueued() {
        FakeLink a = h.client("a", 60);
        long id = h.instanceOf(a);
        submit(a, id, 1, 0, 1, 2);
        submit(a, id, 2, 3, 2, 4);
        Message.ErrorMessage err = a.sent(Message.ErrorMessage.class).get(0);
        assertThat(err.requestId()).isEqualTo(2);
        assertThat(err.errorCode()).isEqualTo(ErrorCode.INVALID_TASK);
        assertThat(err.message()).contains("task 1 of the bundle (clientTaskId 2)").contains("already used");
        assertThat(h.scheduler.queuedCount()).isEqualTo(3);
        submit(a, id, 3, 7, 8, 7);
        assertThat(a.sent(Message.ErrorMessage.class).get(1).message()).contains("clientTaskId 7")
                .contains("twice");
        assertThat(h.scheduler.queuedCount()).isEqualTo(3);
    }

    @Test
    void aBundleSentAgainIsAcceptedAgainButQueuedOnce() {
        FakeLink e = h.executor("e", 10, 10);
        FakeLink a = h.client("a", 60);
        long id = h.instanceOf(a);
        submit(a, id, 1, 0, 1, 2);
        submit(a, id, 2, 0, 1, 2); // the reply to the first was lost: the client sends the bundle again
        assertThat(a.sent(Message.Submitted.class)).extracting(Message.Submitted::accepted).containsExactly(3, 3);
        List<Message.DispatchedTask> ran = dispatched(e);
        assertThat(ran).hasSize(3);
        h.complete(e, ran);
        submit(a, id, 3, 0, 1, 2); // even after they finished
        assertThat(dispatched(e)).isEmpty();
        assertThat(delivered(a)).hasSize(3);
    }
}
