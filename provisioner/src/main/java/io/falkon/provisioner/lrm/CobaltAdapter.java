package io.falkon.provisioner.lrm;

import io.falkon.provisioner.JobRequest;
import io.falkon.provisioner.JobState;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Cobalt, the scheduler of Argonne's Blue Gene/P (Falkon BG/P paper §3.2.1): {@code qsub -n N -t MIN
 * --mode script}, {@code qstat}, {@code qdel}. Cobalt allocates whole partitions, so the node count is
 * rounded up to a multiple of the partition size (a PSET: 64 nodes on the BG/P); the script, which
 * runs on the partition's front end, starts one executor per compute node with {@code cobalt-mpirun}.
 *
 * <p>Cobalt no longer runs anywhere, so this adapter is tested only against a fake (scripts that
 * print Cobalt's output formats and run the job on this machine, under
 * {@code provisioner/src/test/lrm/fake-cobalt}); it has never met a real Cobalt.
 */
public final class CobaltAdapter extends BatchAdapter {
    private final int partitionNodes;

    /** @param partitionNodes allocation granularity in nodes (64 for a BG/P PSET; 1 for none) */
    public CobaltAdapter(Shell shell, int partitionNodes) {
        super(shell);
        if (partitionNodes < 1) {
            throw new IllegalArgumentException("partition size must be at least 1 node");
        }
        this.partitionNodes = partitionNodes;
    }

    @Override
    public String name() {
        return "cobalt";
    }

    /** The nodes Cobalt will allocate for a request of {@code nodes}: whole partitions. */
    public int allocated(int nodes) {
        return (nodes + partitionNodes - 1) / partitionNodes * partitionNodes;
    }

    @Override
    public String script(JobRequest r) {
        return "#!/bin/sh\n"
                + "# Cobalt script mode: runs on the partition's front end (" + allocated(r.nodes()) + " nodes)\n"
                + "# one Falkon executor per compute node; the job ends when they have all left\n"
                + "exec cobalt-mpirun -np " + allocated(r.nodes()) + " -mode smp sh -c "
                + JobRequest.quote(r.nodeCommand()) + "\n";
    }

    @Override
    String scriptSuffix() {
        return ".cobalt";
    }

    @Override
    List<String> submitCommand(JobRequest r, Path script) {
        script.toFile().setExecutable(true);
        return List.of("qsub", "-n", Integer.toString(allocated(r.nodes())), "-t", Long.toString(r.wallMinutes()),
                "--mode", "script", "-O", r.workDir().resolve(r.name()).toString(), script.toString());
    }

    @Override
    String jobId(String out) {
        String id = out.lines().reduce((a, b) -> b).orElse("").strip(); // the id is the last line
        return id.matches("[0-9]+") ? id : null;
    }

    @Override
    List<String> statusCommand(Collection<String> jobIds) {
        List<String> cmd = new ArrayList<>(List.of("qstat")); // JobID User WallTime Nodes State Location
        cmd.addAll(jobIds);
        return cmd;
    }

    @Override
    int stateColumn() {
        return 4;
    }

    @Override
    JobState state(String cobalt) {
        return switch (cobalt) {
            case "queued", "user_hold", "admin_hold", "dep_hold", "maxrun_hold", "starting" -> JobState.QUEUED;
            case "running" -> JobState.RUNNING;
            default -> JobState.DONE; // exiting, killing, done, ...
        };
    }

    @Override
    public void cancel(String jobId) throws IOException {
        shell.check(List.of("qdel", jobId)); // lists what it deleted; a job already gone is not listed
    }
}
