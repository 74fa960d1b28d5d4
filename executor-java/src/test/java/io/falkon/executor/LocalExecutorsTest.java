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
        // A zombie: the child of a process that never waits for it. The shell becomes `sleep` (exec) before
        // its child may exit, which it does on reading a line from the shell's input: a shell still a
        // shell reaps an exited child now and then (it did in 1 of 100 runs on a loaded machine).
        Process parent = new ProcessBuilder("sh", "-c", "exec 3<&0; (read line <&3) & echo $!; exec sleep 600").start();
        try {
            long child = Long.parseLong(new BufferedReader(new InputStreamReader(parent.getInputStream(),
                    StandardCharsets.US_ASCII)).readLine().strip());
            Path comm = Path.of("/proc", Long.toString(parent.pid()), "comm");
            await().atMost(1, TimeUnit.MINUTES).until(() -> Files.readString(comm).strip().equals("sleep"));
            assertThat(LocalExecutors.dead(child)).as("still running").isFalse();
            parent.getOutputStream().write("exit\n".getBytes(StandardCharsets.US_ASCII));
            parent.getOutputStream().flush();
            await().atMost(1, TimeUnit.MINUTES).until(() -> Files.readString(Path.of("/proc", Long.toString(child),
                    "stat")).contains(") Z "));
            assertThat(LocalExecutors.dead(child)).isTrue();
        } finally {
            parent.getOutputStream().close(); // the child, if the test failed before its line, reads the end
            parent.destroy();
            parent.waitFor(1, TimeUnit.MINUTES);
        }
        // reaped: gone from /proc
        Process reaped = new ProcessBuilder("true").start();
        assertThat(reaped.waitFor(1, TimeUnit.MINUTES)).isTrue();
        assertThat(LocalExecutors.dead(reaped.pid())).isTrue();
    }
}
