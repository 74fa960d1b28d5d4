package io.falkon.executor.run;

import io.falkon.protocol.Execution;
import io.falkon.protocol.TaskSpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class PosixRunnerTest extends TaskRunnerContract {
    final ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor();
    PosixRunner last;

    @Override
    TaskRunner runner(int outputCap, long spoolLimit) {
        assertThat(PosixRunner.available()).as(PosixRunner.unavailableReason()).isTrue();
        PosixRunner r = new PosixRunner(spool, 0, outputCap, spoolLimit, work, watchdog);
        // the executor's slot pool does this every second
        watchdog.scheduleWithFixedDelay(r::checkSpool, 100, 100, TimeUnit.MILLISECONDS);
        last = r;
        return r;
    }

    @AfterEach
    void stop() {
        watchdog.shutdownNow();
    }

    @Test
    void aProcessKilledByASignalSaysWhich() {
        Execution x = runner(1024).run(1, TaskSpec.shell("kill -TERM $$"));
        assertThat(x.exitCode()).isEqualTo(128 + 15);
        assertThat(x.detail()).isEqualTo("killed by signal 15");
    }

    @Test
    void backgroundProcessesLeftInTheTasksGroupDieWithIt() throws Exception {
        Path pidFile = work.resolve("bg.pid");
        Execution x = runner(1024).run(1, TaskSpec.shell("sleep 60 >/dev/null 2>&1 & echo $! > " + pidFile));
        assertThat(x.exitCode()).isZero();
        assertGone(Long.parseLong(Files.readString(pidFile).trim()));
    }

    @Test
    void theChildStartsWithDefaultSignalDispositionsAndNoDescriptorsBeyondTheStandardThree() {
        // SIGPIPE at its default kills 'yes' quietly; fds 0-2 only
        Execution x = runner(1024).run(1, TaskSpec.shell("yes | head -1; ls /proc/self/fd | wc -l"));
        assertThat(x.stdoutText().lines().toList()).isEqualTo(List.of("y", "4")); // 0,1,2 + ls's own dir fd
        assertThat(x.stderrText()).isEmpty();
    }
}
