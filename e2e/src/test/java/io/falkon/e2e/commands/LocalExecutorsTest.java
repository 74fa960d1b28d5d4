package io.falkon.e2e.commands;

import io.falkon.executor.LocalExecutors;
import io.falkon.protocol.auth.Token;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

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

    /**
     * An executor on pipes that has stopped reading (here a FAKE executor, a script that sleeps,
     * labelled so: a hung C executor cannot be made to order) while something is being written to
     * it: closing must not wait on that write, and the executor is killed after its 10 s.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void closingDoesNotHangOnAnExecutorThatStoppedReadingItsPipe(@TempDir Path dir) throws Exception {
        Path fake = dir.resolve("fake-executor-that-never-reads");
        Files.writeString(fake, "#!/bin/sh\nexec sleep 600\n");
        Files.setPosixFilePermissions(fake, PosixFilePermissions.fromString("rwx------"));
        String before = System.getProperty(LocalExecutors.C_PROPERTY);
        LocalExecutors ex;
        try {
            System.setProperty(LocalExecutors.C_PROPERTY, fake.toString());
            ex = LocalExecutors.start(LocalExecutors.Impl.C, 1, 1, false, LocalExecutors.STDIO, Token.random(), "t",
                    List.of());
        } finally {
            if (before == null) {
                System.clearProperty(LocalExecutors.C_PROPERTY);
            } else {
                System.setProperty(LocalExecutors.C_PROPERTY, before);
            }
        }
        Process p = ex.processes().get(0);
        AtomicLong written = new AtomicLong();
        Thread writer = new Thread(() -> {
            try {
                byte[] block = new byte[8192];
                while (true) {
                    p.getOutputStream().write(block); // blocks once the pipe is full: no one reads it
                    p.getOutputStream().flush();
                    written.addAndGet(block.length);
                }
            } catch (IOException e) {
                // the executor was killed: the write fails
            }
        }, "writing-to-a-pipe-no-one-reads");
        writer.setDaemon(true);
        writer.start();
        // a pipe holds 64 KiB: past that, the writer waits inside its write, holding the stream
        await().atMost(Duration.ofSeconds(60)).until(() -> written.get() >= 64 * 1024 && blockedWriting(writer));
        ex.close(); // returns: the executor is killed after its 10 s, which ends the write
        assertThat(p.isAlive()).isFalse();
        writer.join(30_000);
        assertThat(writer.isAlive()).as("the write ended when the executor was killed").isFalse();
    }

    /** The thread is inside a write to the pipe (a native write shows as RUNNABLE in FileOutputStream). */
    private static boolean blockedWriting(Thread t) {
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getClassName().equals("java.io.FileOutputStream") && e.getMethodName().startsWith("write")) {
                return true;
            }
        }
        return false;
    }
}
