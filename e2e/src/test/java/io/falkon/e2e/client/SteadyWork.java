package io.falkon.e2e.client;

import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import io.falkon.protocol.TaskSpec;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A well-behaved client's work beside an attack: rounds of two small tasks, each waited for before
 * the next, until stopped; then every one of them must have succeeded.
 */
final class SteadyWork {
    private final AtomicBoolean going = new AtomicBoolean(true);
    private final List<CompletableFuture<TaskResult>> work = new ArrayList<>();
    private final CompletableFuture<Void> loop;

    SteadyWork(Instance in) {
        loop = CompletableFuture.runAsync(() -> {
            while (going.get()) {
                List<CompletableFuture<TaskResult>> round = in.submit(List.of(TaskSpec.of("true"),
                        TaskSpec.shell("echo fine")));
                synchronized (work) {
                    work.addAll(round);
                }
                round.forEach(CompletableFuture::join);
            }
        });
    }

    /** Stops submitting and checks that some work was done and all of it succeeded. */
    void stopAndAssertAllSucceeded() throws Exception {
        going.set(false);
        loop.get(1, TimeUnit.MINUTES);
        synchronized (work) {
            assertThat(work).isNotEmpty().allSatisfy(w -> assertThat(w.join().succeeded()).isTrue());
        }
    }
}
