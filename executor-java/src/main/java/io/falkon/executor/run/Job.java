package io.falkon.executor.run;

import io.falkon.protocol.TaskSpec;

/**
 * One dispatched task as the executor holds it; {@code generation} is the connection it came on
 * (a result for an older connection is dropped: the dispatcher has re-queued that task).
 */
public record Job(long taskId, int attempt, TaskSpec spec, int generation) {
}
