package io.falkon.executor;

import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * How {@link LocalExecutors#leaving()} tells an executor that has just died from a live one without
 * waiting for the JVM's own notice of the exit: a child that exited is a zombie until reaped, and
 * gone from /proc after.
 */
class LocalExecutorsTest {
    @Test
    void aLiveProcessIsNotDead() {
        assertThat(LocalExecutors.dead(ProcessHandle.current().pid())).isFalse();
    }

    @Test
    void aChildThatExitedIsDeadWhileAZombieAndOnceReaped() throws Exception {
        // a zombie: the child of a shell that does not wait for it (Java's Process would reap it at once)
        Process shell = new ProcessBuilder("sh", "-c", "sleep 0 & echo $!; read line").start();
        try {
            long child = Long.parseLong(new BufferedReader(new InputStreamReader(shell.getInputStream(),
                    StandardCharsets.US_ASCII)).readLine().strip());
            await().atMost(1, TimeUnit.MINUTES).until(() -> Files.readString(Path.of("/proc", Long.toString(child),
                    "stat")).contains(") Z "));
            assertThat(LocalExecutors.dead(child)).isTrue();
        } finally {
            shell.getOutputStream().close();
            shell.waitFor(1, TimeUnit.MINUTES);
        }
        // reaped: gone from /proc
        Process reaped = new ProcessBuilder("true").start();
        assertThat(reaped.waitFor(1, TimeUnit.MINUTES)).isTrue();
        assertThat(LocalExecutors.dead(reaped.pid())).isTrue();
    }
}
