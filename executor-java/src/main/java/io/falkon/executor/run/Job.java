package io.falkon.executor.run;

import io.falkon.protocol.TaskSpec;

/** One dispatched task as the executor holds it. */
public record Job(long taskId, int attempt, TaskSpec spec) {
}
