package io.falkon.dispatcher.admission;

import io.falkon.dispatcher.core.Journal;
import io.falkon.dispatcher.core.RecordingLink;
import io.falkon.dispatcher.core.Scheduler;
import io.falkon.dispatcher.core.SchedulerConfig;
import io.falkon.dispatcher.core.SchedulerLoop;
import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskSpecCodec;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.time.Clock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The admission stage in front of a real scheduler thread: a flood of bundles that the scheduler
 * cannot take yet is refused with BUSY at the door (bounded heap), not queued up to an
 * out-of-memory error, and every bundle is accepted once it is sent again.
 */
class AdmissionTest {
    /** The smallest budget a dispatcher takes: bundles waiting for the scheduler may hold an eighth of it. */
    private static final long BUDGET = 1 << 20;

    private final SchedulerLoop loop = new SchedulerLoop(new Scheduler(new FirstAvailable(), Clock.SYSTEM, "d",
            SchedulerConfig.defaults().withMemoryBudgetBytes(BUDGET), Journal.NONE)).start();
    private final Admission admission = new Admission(loop, Token.random(), 1 << 20);
    private final RecordingLink link = new RecordingLink();
    private final Caller caller = admission.inProcess(link);

    private boolean submittedFor(long requestId) {
        return link.of(Message.Submitted.class).stream().anyMatch(s -> s.requestId() == requestId);
    }

    private ErrorCode errorFor(long requestId) {
        return link.of(Message.ErrorMessage.class).stream().filter(e -> e.requestId() == requestId)
                .map(e -> ErrorCode.of(e.code())).findFirst().orElse(null);
    }

    @AfterEach
    void stop() {
        loop.close();
    }

    private long createInstance() {
        assertThat(admission.accept(caller, new Message.CreateInstance(1, "flood", 0))).isNull();
        await().atMost(5, TimeUnit.SECONDS).until(() -> !link.of(Message.InstanceCreated.class).isEmpty());
        return link.of(Message.InstanceCreated.class).get(0).instanceId();
    }

    /** A bundle of {@code n} tasks of about 1 KiB each, with task ids from {@code first}. */
    private static Message.Submit bundle(long requestId, long instance, long first, int n) {
        byte[] spec = TaskSpecCodec.encode(TaskSpec.of("/bin/echo", "x".repeat(1000)));
        List<Message.SubmittedTask> tasks = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            tasks.add(new Message.SubmittedTask(first + i, spec));
        }
        return new Message.Submit(requestId, instance, tasks);
    }

    @Test
    void bundlesBeyondWhatMayWaitForABusySchedulerAreRefusedWithBusyAndAcceptedWhenSentAgain() throws Exception {
        long instance = createInstance();
        CountDownLatch release = new CountDownLatch(1);
        loop.execute(() -> {
            try {
                release.await(); // the scheduler thread is busy (a long collection, say)
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        int bundles = 40; // 40 x 20 tasks x ~1.2 KiB: far more than the 128 KiB that may wait
        for (int r = 0; r < bundles; r++) {
            assertThat(admission.accept(caller, bundle(100 + r, instance, r * 20L, 20))).isNull();
        }
        assertThat(loop.pendingBundleBytes()).isPositive().isLessThanOrEqualTo(BUDGET / 8);

        release.countDown();
        await().atMost(5, TimeUnit.SECONDS).until(() -> link.of(Message.Submitted.class).size()
                + link.of(Message.ErrorMessage.class).size() == bundles);
        List<Integer> refused = new ArrayList<>();
        for (int r = 0; r < bundles; r++) {
            ErrorCode e = errorFor(100 + r);
            if (e != null) {
                assertThat(e).isEqualTo(ErrorCode.BUSY);
                refused.add(r);
            } else {
                assertThat(submittedFor(100 + r)).isTrue();
            }
        }
        assertThat(refused).isNotEmpty().hasSizeLessThan(bundles);
        assertThat(link.of(Message.ErrorMessage.class).get(0).message()).contains("bundles waiting to be queued")
                .contains("send it again later");
        assertThat(loop.pendingBundleBytes()).isZero();

        // sent again (as a client does after BUSY), one at a time, each refused bundle is now taken
        for (int r : refused) {
            long again = 1000 + r;
            assertThat(admission.accept(caller, bundle(again, instance, r * 20L, 20))).isNull();
            await().atMost(5, TimeUnit.SECONDS).until(() -> submittedFor(again) || errorFor(again) != null);
            assertThat(errorFor(again)).isNull();
        }
        assertThat(loop.pendingBundleBytes()).isZero();
    }

    @Test
    void oneBundleLargerThanTheBoundIsTakenWhenNoneWaits() {
        long instance = createInstance();
        assertThat(admission.accept(caller, bundle(7, instance, 0, 200))).isNull(); // ~240 KiB
        await().atMost(5, TimeUnit.SECONDS).until(() -> submittedFor(7));
        assertThat(errorFor(7)).isNull();
    }
}
