package io.falkon.provisioner.lrm;

import io.falkon.provisioner.JobRequest;
import io.falkon.provisioner.JobState;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;

/**
 * SLURM: {@code sbatch} a script that starts one executor per node with {@code srun}, {@code squeue}
 * for the state, {@code scancel}.
 */
public final class SlurmAdapter extends BatchAdapter {

    public SlurmAdapter(Shell shell) {
        super(shell);
    }

    @Override
    public String name() {
        return "slurm";
    }

    @Override
    public String script(JobRequest r) {
        return "#!/bin/sh\n"
                + "#SBATCH --job-name=" + r.name() + "\n"
                + "#SBATCH --nodes=" + r.nodes() + "\n"
                + "#SBATCH --ntasks-per-node=1\n"
                // GRES: the job's steps get the devices, and CUDA_VISIBLE_DEVICES names them to the executor
                + (r.gpusPerNode() > 0 ? "#SBATCH --gres=gpu:" + r.gpusPerNode() + "\n" : "")
                + "#SBATCH --time=" + r.wallMinutes() + "\n"
                + "#SBATCH --output=" + r.workDir().resolve(r.name() + "-%j.out") + "\n"
                + "# one Falkon executor per node; the job ends when they have all left\n"
                + "srun --ntasks-per-node=1 sh -c " + JobRequest.quote(r.nodeCommand()) + "\n";
    }

    @Override
    String scriptSuffix() {
        return ".sbatch";
    }

    @Override
    List<String> submitCommand(JobRequest r, Path script) {
        return List.of("sbatch", "--parsable", script.toString());
    }

    @Override
    String jobId(String out) {
        String id = out.contains(";") ? out.substring(0, out.indexOf(';')) : out; // ID;CLUSTER
        return id.matches("[0-9]+(_[0-9]+)?") ? id : null;
    }

    @Override
    List<String> statusCommand(Collection<String> jobIds) {
        // all jobs, finished ones included: squeue -j fails outright on an id it has forgotten
        return List.of("squeue", "-h", "-t", "all", "-o", "%i %T");
    }

    @Override
    int stateColumn() {
        return 1;
    }

    @Override
    JobState state(String slurm) {
        return switch (slurm) {
            case "PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESIZING", "SUSPENDED",
                 "STOPPED" -> JobState.QUEUED;
            case "RUNNING" -> JobState.RUNNING;
            default -> JobState.DONE; // COMPLETING, COMPLETED, CANCELLED, FAILED, TIMEOUT, NODE_FAIL, ...
        };
    }

    @Override
    public void cancel(String jobId) throws IOException {
        Shell.Result r = shell.run(List.of("scancel", jobId));
        if (r.exit() != 0 && !r.stderr().contains("Invalid job id")) {
            throw new IOException("scancel " + jobId + " failed: " + r.stderr().strip());
        }
    }
}
