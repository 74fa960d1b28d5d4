package io.falkon.client;

import io.falkon.protocol.DataCodec;
import io.falkon.protocol.DataStats;
import io.falkon.protocol.Execution;
import io.falkon.protocol.TaskStatus;

/**
 * The outcome of one task, as delivered to the client.
 *
 * @param taskId           the id this client gave the task (its position in submission order)
 * @param attempt          which dispatch attempt produced this result (0 = the first)
 * @param executorId       the executor that ran it, empty if it never reached one
 * @param submittedMicros  dispatcher clock: when the dispatcher accepted the task
 * @param dispatchedMicros dispatcher clock: when it was sent to the executor (0 if never)
 * @param completedMicros  dispatcher clock: when its result reached the dispatcher
 * @param deliveredMicros  client clock: when the result reached this client
 * @param execution        what happened: status, exit code, output, executor timestamps
 */
public record TaskResult(long taskId, int attempt, String executorId, long submittedMicros, long dispatchedMicros,
                         long completedMicros, long deliveredMicros, Execution execution) {

    /** Did the task run and exit 0? */
    public boolean succeeded() {
        return execution.succeeded();
    }

    /**
     * Why the task did not succeed, in a few words: the exit code and the first line of its stderr,
     * or the framework's explanation (a program that cannot start, a fetch that failed, ...); empty
     * for a success.
     */
    public String reason() {
        if (succeeded()) {
            return "";
        }
        String detail = execution.detail();
        String err = stderr().strip();
        int nl = err.indexOf('\n');
        String firstLine = nl < 0 ? err : err.substring(0, nl) + " ...";
        String head = status() == TaskStatus.EXITED ? "exit " + exitCode() : status().toString();
        return head + (detail.isEmpty() ? "" : ": " + detail) + (firstLine.isEmpty() ? "" : ": " + firstLine);
    }

    @Override
    public String toString() {
        return "task " + taskId + " " + (succeeded() ? "succeeded" : reason()) + " (attempt " + attempt
                + (executorId.isEmpty() ? "" : " on " + executorId) + ")";
    }

    public TaskStatus status() {
        return execution.status();
    }

    /** The exit code for {@link TaskStatus#EXITED}, else -1. */
    public int exitCode() {
        return execution.exitCode();
    }

    /** Captured standard output as UTF-8 text (up to the executor's cap). */
    public String stdout() {
        return execution.stdoutText();
    }

    /** Captured standard error as UTF-8 text (up to the executor's cap). */
    public String stderr() {
        return execution.stderrText();
    }

    /** Where the task's inputs came from (all zero for a task without inputs). */
    public DataStats data() {
        return DataCodec.statsOf(execution);
    }
}
