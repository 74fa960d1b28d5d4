package io.falkon.swift.app;

import io.falkon.client.ClientOptions;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.executor.Executor;
import io.falkon.executor.ExecutorConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The link Swift's jobs share, against a real dispatcher and executor on 127.0.0.1 (no Swift needed). */
class DispatcherLinkTest {
    private Dispatcher dispatcher;
    private Executor executor;

    @BeforeEach
    void start() throws Exception {
        dispatcher = Dispatcher.start(DispatcherConfig.local());
        executor = Executor.start(ExecutorConfig.of("127.0.0.1", dispatcher.port()).withId("e1").withSlots(4)
                .withToken(dispatcher.token()));
        dispatcher.awaitExecutors(1, Duration.ofSeconds(30));
    }

    @AfterEach
    void stop() {
        DispatcherLink.closeAll();
        executor.close();
        dispatcher.close();
    }

    /** Made afresh for every job, as the provider does from Swift's configuration: equal, never the same objects. */
    private DispatcherLink.Options options(Duration reconnectFor) {
        return new DispatcherLink.Options("127.0.0.1:" + dispatcher.port(), ClientOptions.defaults()
                .withToken(dispatcher.token().value()).withReconnectFor(reconnectFor));
    }

    private static AppJob shell(String command, Duration wallTime) {
        return new AppJob("/bin/sh", List.of("-c", command), null, Map.of(), wallTime);
    }

    private static CompletableFuture<Outcome> submit(DispatcherLink link, AppJob job) {
        CompletableFuture<Outcome> f = new CompletableFuture<>();
        link.submit(job, f::complete);
        return f;
    }

    @Test
    void aBurstOfJobsTravelsInFewBundlesOverOneSharedConnection() throws Exception {
        DispatcherLink link = DispatcherLink.of(options(Duration.ofSeconds(10)));
        assertThat(DispatcherLink.of(options(Duration.ofSeconds(10)))).as("one link per dispatcher").isSameAs(link);
        int n = 200;
        CompletableFuture<?>[] all = new CompletableFuture<?>[n];
        for (int i = 0; i < n; i++) {
            all[i] = submit(link, new AppJob("/bin/echo", List.of(Integer.toString(i)), null, Map.of(), null));
        }
        CompletableFuture.allOf(all).get(60, TimeUnit.SECONDS);
        for (CompletableFuture<?> f : all) {
            assertThat(((Outcome) f.get()).completed()).isTrue();
        }
        assertThat(link.bundles()).as("bundles for %d jobs queued at once", n).isLessThan(n / 10);
    }

    @Test
    void anExitCodeAndAWallTimeComeBackAsSwiftReadsThem() throws Exception {
        DispatcherLink link = DispatcherLink.of(options(Duration.ofSeconds(10)));
        Outcome exit3 = submit(link, shell("echo bad input >&2; exit 3", null)).get(60, TimeUnit.SECONDS);
        assertThat(exit3.completed()).isFalse();
        assertThat(exit3.exitCode()).isEqualTo(3);
        assertThat(exit3.message()).contains("exited with code 3").contains("bad input");
        Outcome slow = submit(link, shell("sleep 30", Duration.ofSeconds(1))).get(60, TimeUnit.SECONDS);
        assertThat(slow.completed()).isFalse();
        assertThat(slow.exitCode()).isEqualTo(-1);
        assertThat(slow.message()).contains("over its wall time").contains("1 s");
    }

    @Test
    void aCancelledJobIsNotReported() throws Exception {
        DispatcherLink link = DispatcherLink.of(options(Duration.ofSeconds(10)));
        CompletableFuture<Outcome> cancelledOutcome = new CompletableFuture<>();
        DispatcherLink.Submitted cancelled = link.submit(shell("sleep 0.2", null), cancelledOutcome::complete);
        cancelled.cancel();
        // outcomes are reported in order on one thread: once a later, longer job is reported, the
        // cancelled one would have been too
        assertThat(submit(link, shell("sleep 0.5", null)).get(60, TimeUnit.SECONDS).completed()).isTrue();
        assertThat(cancelledOutcome).isNotDone();
    }

    @Test
    void aDispatcherLostForGoodFailsTheJobsSayingSoAndTheNextJobConnectsAfresh() throws Exception {
        DispatcherLink.Options options = options(Duration.ofSeconds(1));
        DispatcherLink link = DispatcherLink.of(options);
        CompletableFuture<Outcome> running = submit(link, shell("sleep 30", null));
        // the job is on the executor before the dispatcher goes
        await().atMost(Duration.ofSeconds(30)).until(() -> dispatcher.status()
                .contains("\"running\":1"));
        String address = "127.0.0.1:" + dispatcher.port();
        executor.close();
        dispatcher.close();
        Outcome lost = running.get(60, TimeUnit.SECONDS);
        assertThat(lost.completed()).isFalse();
        assertThat(lost.message()).startsWith("lost the Falkon dispatcher at " + address);
        // the lost link was let go: the next job dials again (and, with no dispatcher, says so)
        assertThatThrownBy(() -> DispatcherLink.of(options)).hasMessageContaining(address);
    }
}
