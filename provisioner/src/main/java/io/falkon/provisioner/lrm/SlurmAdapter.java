package io.falkon.provisioner.lrm;

import io.falkon.provisioner.JobRequest;
import io.falkon.provisioner.JobState;
import io.falkon.provisioner.LrmAdapter;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * SLURM: {@code sbatch} a script that starts one executor per node with {@code srun}, {@code squeue}
 * for the state, {@code scancel}.
 */
public final class SlurmAdapter implements LrmAdapter {
    private final Shell shell;

    public SlurmAdapter(Shell shell) {
        this.shell = shell;
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
                + "#SBATCH --time=" + r.wallMinutes() + "\n"
                + "#SBATCH --output=" + r.workDir().resolve(r.name() + "-%j.out") + "\n"
                + "# one Falkon executor per node; the job ends when they have all left\n"
                + "srun --ntasks-per-node=1 sh -c " + JobRequest.quote(r.nodeCommand()) + "\n";
    }

    @Override
    public String submit(JobRequest r) throws IOException {
        Path file = r.workDir().resolve(r.name() + ".sbatch");
        Files.createDirectories(r.workDir());
        Files.writeString(file, script(r));
        String out = shell.check(List.of("sbatch", "--parsable", file.toString())).strip();
        String id = out.contains(";") ? out.substring(0, out.indexOf(';')) : out;
        if (!id.matches("[0-9]+(_[0-9]+)?")) {
            throw new IOException("sbatch printed '" + out + "', not a job id");
        }
        return id;
    }

    @Override
    public Map<String, JobState> states(Collection<String> jobIds) throws IOException {
        Map<String, JobState> out = new HashMap<>();
        if (jobIds.isEmpty()) {
            return out;
        }
        // all jobs, finished ones included, in one call: squeue -j fails outright on an id it forgot
        Map<String, String> known = new HashMap<>();
        for (String line : shell.check(List.of("squeue", "-h", "-t", "all", "-o", "%i %T")).split("\n")) {
            String[] f = line.strip().split("\\s+");
            if (f.length == 2) {
                known.put(f[0], f[1]);
            }
        }
        for (String id : jobIds) {
            out.put(id, state(known.get(id)));
        }
        return out;
    }

    static JobState state(String slurm) {
        if (slurm == null) {
            return JobState.DONE;
        }
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
