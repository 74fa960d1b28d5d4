package io.falkon.e2e.commands;

import io.falkon.executor.LocalExecutors;
import io.falkon.protocol.auth.Token;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link LocalExecutors}: the executor processes of {@code falkon run}. They dial a socket that
 * accepts (in its backlog) and never answers, so that they stay until the test closes it; then
 * they exit, having lost their dispatcher.
 */
class LocalExecutorsTest {
    private final LocalExecutors.Impl impl = LocalExecutors.Impl.fastest();

    @Test
    void whenEveryExecutorHasExitedUnexpectedlyAllGoneSaysWhich() throws Exception {
        LocalExecutors ex;
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            ex = LocalExecutors.start(impl, 2, 1, false, silent.getLocalPort(), Token.random(), "t", List.of());
            assertThat(ex.allGone()).as("both still running").isNotDone();
        }
        try {
            assertThatThrownBy(() -> ex.allGone().get(60, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("every local executor exited unexpectedly (the last: executor ")
                    .hasMessageContaining("exited unexpectedly with status");
            assertThat(ex.died()).isCompletedExceptionally();
        } finally {
            ex.close();
        }
    }

    @Test
    void exitsAfterLeavingAreExpectedAndNotReported() throws Exception {
        LocalExecutors ex;
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            ex = LocalExecutors.start(impl, 2, 1, false, silent.getLocalPort(), Token.random(), "t", List.of());
            ex.leaving(); // as falkon run does before it closes its dispatcher
        }
        try {
            ex.allGone().get(60, TimeUnit.SECONDS); // normally: they were told to go
            assertThat(ex.died()).isNotDone();
            for (Process p : ex.processes()) {
                assertThat(p.isAlive()).isFalse();
            }
        } finally {
            ex.close();
        }
    }
}
