package io.falkon.swift.app;

import io.falkon.client.TaskResult;
import io.falkon.protocol.TaskStatus;

/**
 * How an app's Falkon task ended, in the terms Swift's provider contract uses: completed, or
 * failed with a message and (when the program ran and exited) its exit code, which Swift reads
 * from a {@code JobException}.
 *
 * @param exitCode the program's exit code, or -1 when it did not run to an exit
 */
public record Outcome(boolean completed, String message, int exitCode) {

    static final Outcome COMPLETED = new Outcome(true, "", 0);

    /** The outcome of a Falkon result; {@code wallTime} is the limit the job set, for the message. */
    public static Outcome of(TaskResult r, AppJob job) {
        if (r.succeeded()) {
            return COMPLETED;
        }
        if (r.status() == TaskStatus.EXITED) {
            return new Outcome(false, "the app exited with code " + r.exitCode() + " on Falkon executor "
                    + r.executorId() + stderr(r), r.exitCode());
        }
        if (r.status() == TaskStatus.TIMEOUT) {
            return new Outcome(false, "the app ran over its wall time (maxwalltime " + (job.wallTime() == null ? "?"
                    : job.wallTime().toSeconds() + " s") + ") and was killed on Falkon executor " + r.executorId(), -1);
        }
        return new Outcome(false, "Falkon could not run the app: " + r.reason(), -1);
    }

    /** The connection to the dispatcher was lost for good, or the task could not be submitted. */
    public static Outcome lost(String address, Throwable cause) {
        return new Outcome(false, "lost the Falkon dispatcher at " + address + ": " + cause.getMessage(), -1);
    }

    private static String stderr(TaskResult r) {
        String err = r.stderr().strip();
        int nl = err.indexOf('\n');
        err = nl < 0 ? err : err.substring(0, nl) + " ...";
        return err.isEmpty() ? "" : ": " + (err.length() > 300 ? err.substring(0, 300) + "..." : err);
    }
}
