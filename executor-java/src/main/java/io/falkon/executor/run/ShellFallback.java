package io.falkon.executor.run;

import io.falkon.protocol.Execution;
import io.falkon.protocol.ShellLine;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskStatus;

/**
 * A shell line run without the shell ({@link ShellLine}) whose program cannot be started is run
 * again through {@code /bin/sh -c}, so that its result is exactly the shell's (127 "not found",
 * 126 "Permission denied", a script without {@code #!}). Only the failure path pays for the shell.
 */
final class ShellFallback implements TaskRunner {
    private final TaskRunner inner;

    ShellFallback(TaskRunner inner) {
        this.inner = inner;
    }

    @Override
    public Execution run(long taskId, TaskSpec spec) {
        Execution x = inner.run(taskId, spec);
        if (x.status() == TaskStatus.LAUNCH_FAILED && ShellLine.of(spec) != null) {
            return inner.run(taskId, ShellLine.throughShell(spec));
        }
        return x;
    }

    @Override
    public boolean cancel(long taskId) {
        return inner.cancel(taskId);
    }

    @Override
    public void killCurrent() {
        inner.killCurrent();
    }
}
