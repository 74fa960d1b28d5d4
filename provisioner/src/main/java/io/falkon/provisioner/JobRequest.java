package io.falkon.provisioner;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * One allocation to ask a batch scheduler for: {@code nodes} nodes for {@code wallTime}, running one
 * executor per node.
 *
 * @param name            the job's name (shows in squeue/qstat), also the prefix of its executors' ids
 * @param nodes           nodes to allocate
 * @param slotsPerNode    task slots of each node's executor (and the cores asked for per node)
 * @param wallTime        how long the allocation may last
 * @param executorCommand the command that starts one executor (program and arguments); the adapter
 *                        appends {@code --id NAME-HOST-PID} so that the provisioner can tell which
 *                        executors belong to which allocation
 * @param workDir         where the job's script and output files go
 * @param gpusPerNode     GPUs to ask for on each node (queued tasks need them), 0 for none
 */
public record JobRequest(String name, int nodes, int slotsPerNode, Duration wallTime, List<String> executorCommand,
                         Path workDir, int gpusPerNode) {
    /** An allocation without GPUs. */
    public JobRequest(String name, int nodes, int slotsPerNode, Duration wallTime, List<String> executorCommand,
                      Path workDir) {
        this(name, nodes, slotsPerNode, wallTime, executorCommand, workDir, 0);
    }

    public JobRequest {
        if (gpusPerNode < 0) {
            throw new IllegalArgumentException("GPUs per node must be 0 or more, got " + gpusPerNode);
        }
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(wallTime, "wallTime");
        Objects.requireNonNull(workDir, "workDir");
        executorCommand = List.copyOf(executorCommand);
        if (!name.matches("[A-Za-z0-9_.-]+")) {
            throw new IllegalArgumentException("job name '" + name + "' must be letters, digits, '_', '.', '-'");
        }
        if (nodes < 1 || slotsPerNode < 1) {
            throw new IllegalArgumentException("a job needs at least one node and one slot");
        }
        if (wallTime.toSeconds() < 60) {
            throw new IllegalArgumentException("wall time must be at least one minute, got " + wallTime);
        }
        if (executorCommand.isEmpty()) {
            throw new IllegalArgumentException("no executor command");
        }
    }

    /** Wall time in whole minutes, rounded up (what most schedulers take). */
    public long wallMinutes() {
        return (wallTime.toSeconds() + 59) / 60;
    }

    /** The shell command one node runs: the executor, with an id naming this job, the host and the pid. */
    public String nodeCommand() {
        StringBuilder b = new StringBuilder("exec");
        for (String a : executorCommand) {
            b.append(' ').append(quote(a));
        }
        return b.append(" --id \"").append(name).append("-$(hostname)-$$\"").toString();
    }

    /** Single-quotes {@code s} for a POSIX shell. */
    public static String quote(String s) {
        if (s.matches("[A-Za-z0-9_@%+=:,./-]+")) {
            return s;
        }
        return "'" + s.replace("'", "'\\''") + "'";
    }
}
