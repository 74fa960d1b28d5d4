package io.falkon.executor.run;

import io.falkon.protocol.Execution;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** What every {@link TaskRunner} must do, with real processes. */
abstract class TaskRunnerContract {
    @TempDir
    Path spool;
    @TempDir
    Path work;

    abstract TaskRunner runner(int outputCap, long spoolLimit);

    TaskRunner runner(int outputCap) {
        return runner(outputCap, 1L << 30);
    }

    @Test
    void capturesExitCodeAndBothStreams() {
        Execution x = runner(1024).run(1, TaskSpec.shell("echo out; echo err >&2; exit 3"));
        assertThat(x.status()).isEqualTo(TaskStatus.EXITED);
        assertThat(x.exitCode()).isEqualTo(3);
        assertThat(x.stdoutText()).isEqualTo("out\n");
        assertThat(x.stderrText()).isEqualTo("err\n");
        assertThat(x.flags()).isZero();
        assertThat(x.finishedMicros()).isGreaterThanOrEqualTo(x.startedMicros());
    }

    @Test
    void findsProgramsOnThePath() {
        Execution x = runner(1024).run(1, TaskSpec.of("echo", "a b", "c"));
        assertThat(x.exitCode()).isZero();
        assertThat(x.stdoutText()).isEqualTo("a b c\n");
    }

    @Test
    void truncatesOutputAtTheCapAndMarksIt() {
        Execution x = runner(100).run(1, TaskSpec.shell("head -c 5000 /dev/zero | tr '\\0' a; head -c 10 /dev/zero >&2"));
        assertThat(x.exitCode()).isZero();
        assertThat(x.stdout()).hasSize(100).containsOnly((byte) 'a');
        assertThat(x.stdoutTruncated()).isTrue();
        assertThat(x.stderr()).hasSize(10);
        assertThat(x.stderrTruncated()).isFalse();
    }

    @Test
    void aTaskOverItsWallTimeIsKilledWithItsWholeTreeAndReportedAsTimeout() throws Exception {
        Path pidFile = work.resolve("child.pid");
        TaskSpec spec = TaskSpec.builder("/bin/sh", "-c", "sleep 60 & echo $! > " + pidFile + "; wait")
                .wallTime(Duration.ofMillis(500)).build();
        long t0 = System.nanoTime();
        Execution x = runner(1024).run(1, spec);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertThat(x.status()).isEqualTo(TaskStatus.TIMEOUT);
        assertThat(x.exitCode()).isEqualTo(-1);
        assertThat(x.detail()).contains("wall time 500 ms exceeded");
        assertThat(ms).as("killed promptly, not after the sleep").isLessThan(30_000);
        assertGone(Long.parseLong(Files.readString(pidFile).trim()));
    }

    static void assertGone(long pid) throws Exception {
        CompletableFuture<ProcessHandle> exit = ProcessHandle.of(pid).map(ProcessHandle::onExit)
                .orElse(CompletableFuture.completedFuture(null));
        exit.get(10, TimeUnit.SECONDS);
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).as("pid %d alive", pid).isFalse();
    }

    @Test
    void envAndWorkingDirectoryAreApplied() throws Exception {
        Path dir = Files.createDirectory(work.resolve("sub"));
        Execution x = runner(1024).run(1, TaskSpec.builder("/bin/sh", "-c", "echo $GREETING; pwd")
                .env("GREETING", "hello").workDir(dir.toString()).build());
        assertThat(x.stdoutText()).isEqualTo("hello\n" + dir.toRealPath() + "\n");
        Execution dflt = runner(1024).run(2, TaskSpec.of("pwd"));
        assertThat(dflt.stdoutText().trim()).isEqualTo(work.toRealPath().toString());
        Execution override = runner(1024).run(3, TaskSpec.builder("/bin/sh", "-c", "echo $HOME")
                .env("HOME", "/elsewhere").build());
        assertThat(override.stdoutText()).isEqualTo("/elsewhere\n");
        Execution inherited = runner(1024).run(4, TaskSpec.builder("/bin/sh", "-c", "echo $PATH").env("X", "1").build());
        assertThat(inherited.stdoutText().trim()).isEqualTo(System.getenv("PATH"));
    }

    @Test
    void aMissingProgramOrDirectoryIsALaunchFailureThatSaysWhy() {
        Execution x = runner(1024).run(1, TaskSpec.of("/no/such/program"));
        assertThat(x.status()).isEqualTo(TaskStatus.LAUNCH_FAILED);
        assertThat(x.detail()).contains("/no/such/program").containsIgnoringCase("no such file");
        Execution y = runner(1024).run(2, TaskSpec.builder("true").workDir("/no/such/dir").build());
        assertThat(y.status()).isEqualTo(TaskStatus.LAUNCH_FAILED);
        assertThat(y.detail()).contains("working directory /no/such/dir does not exist");
        Execution z = runner(1024).run(3, TaskSpec.of("no-such-program-on-the-path"));
        assertThat(z.status()).isEqualTo(TaskStatus.LAUNCH_FAILED);
    }

    @Test
    void theSpoolFileOfTheLastTaskDoesNotLeakIntoTheNext() {
        TaskRunner r = runner(1024);
        r.run(1, TaskSpec.shell("echo a long line of output; echo more >&2"));
        Execution x = r.run(2, TaskSpec.of("true"));
        assertThat(x.stdout()).isEmpty();
        assertThat(x.stderr()).isEmpty();
    }

    @Test
    void standardInputIsEmpty() {
        Execution x = runner(1024).run(1, TaskSpec.shell("cat; echo done"));
        assertThat(x.stdoutText()).isEqualTo("done\n");
    }

    @Test
    void cancelKillsTheRunningTask() throws Exception {
        TaskRunner r = runner(1024);
        CompletableFuture<Execution> f = CompletableFuture.supplyAsync(() -> r.run(7, TaskSpec.of("sleep", "60")));
        await().atMost(Duration.ofSeconds(10)).until(() -> r.cancel(7));
        Execution x = f.get(20, TimeUnit.SECONDS);
        assertThat(x.status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(r.cancel(7)).as("no longer running").isFalse();
    }

    @Test
    void aTaskWhoseOutputOutgrowsTheSpoolLimitIsKilled() {
        Execution x = runner(1024, 1 << 20).run(1, TaskSpec.shell("yes"));
        assertThat(x.succeeded()).isFalse();
        assertThat(x.detail()).contains("spool limit");
        assertThat(x.stdoutTruncated()).isTrue();
    }
}
