package io.falkon.provisioner.lrm;

import io.falkon.provisioner.JobRequest;
import io.falkon.provisioner.JobState;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;

/**
 * PBS: {@code qsub} / {@code qstat} / {@code qdel}, with Torque's resource syntax
 * ({@code -l nodes=N:ppn=S}) or PBS Pro's ({@code -l select=N:ncpus=S}). The script starts one
 * executor per node with {@code pbsdsh -u} where PBS provides it; on a PBS interface over a SLURM
 * back end (Slurm's Torque wrappers, which is what the tests here run against: PBS syntax, not PBS
 * itself) it uses {@code srun}; on one node, the executor directly.
 */
public final class PbsAdapter extends BatchAdapter {

    /** Which PBS dialect the scheduler speaks. */
    public enum Flavor { TORQUE, PRO }

    private final Flavor flavor;

    public PbsAdapter(Shell shell, Flavor flavor) {
        super(shell);
        this.flavor = flavor;
    }

    @Override
    public String name() {
        return "pbs";
    }

    @Override
    public String script(JobRequest r) {
        long m = r.wallMinutes();
        String gpus = r.gpusPerNode() == 0 ? "" : flavor == Flavor.TORQUE ? ":gpus=" + r.gpusPerNode()
                : ":ngpus=" + r.gpusPerNode();
        String resources = flavor == Flavor.TORQUE ? "nodes=" + r.nodes() + ":ppn=" + r.slotsPerNode() + gpus
                : "select=" + r.nodes() + ":ncpus=" + r.slotsPerNode() + gpus + ":mpiprocs=1";
        String cmd = JobRequest.quote(r.nodeCommand());
        return "#!/bin/sh\n"
                + "#PBS -N " + r.name() + "\n"
                + "#PBS -l " + resources + "\n"
                + "#PBS -l walltime=" + String.format("%d:%02d:00", m / 60, m % 60) + "\n"
                + "#PBS -j oe\n"
                + "#PBS -o " + r.workDir().resolve(r.name() + ".out") + "\n"
                + "# one Falkon executor per node; the job ends when they have all left\n"
                + "if command -v pbsdsh >/dev/null 2>&1; then\n"
                + "  exec pbsdsh -u sh -c " + cmd + "\n"
                + "elif [ -n \"$SLURM_JOB_ID\" ] && command -v srun >/dev/null 2>&1; then\n"
                + "  exec srun --ntasks-per-node=1 sh -c " + cmd + "   # PBS syntax on a SLURM back end\n"
                + "else\n"
                + "  exec sh -c " + cmd + "\n"
                + "fi\n";
    }

    @Override
    String scriptSuffix() {
        return ".pbs";
    }

    @Override
    List<String> submitCommand(JobRequest r, Path script) {
        return List.of("qsub", script.toString());
    }

    @Override
    String jobId(String out) {
        // Torque and PBS Pro print SEQ.SERVER; the Slurm wrappers a bare number
        return out.matches("[0-9]+(\\[\\])?(\\.[A-Za-z0-9_.-]+)?") ? out : null;
    }

    @Override
    List<String> statusCommand(Collection<String> jobIds) {
        return List.of("qstat"); // Job id  Name  User  Time Use  S  Queue
    }

    @Override
    int stateColumn() {
        return 4;
    }

    /**
     * Slurm's qstat wrapper exits with 153 and prints nothing when there is no job at all; an empty
     * list is what that means.
     */
    @Override
    String statusTable(List<String> cmd) throws IOException {
        Shell.Result r = shell.run(cmd);
        if (r.exit() != 0 && !(r.stdout() + r.stderr()).isBlank()) {
            throw new IOException(String.join(" ", cmd) + " failed (exit " + r.exit() + "): "
                    + (r.stdout() + r.stderr()).strip());
        }
        return r.stdout();
    }

    /** qstat may show SEQ.SERVER cut short, or the bare SEQ: compare the sequence numbers. */
    @Override
    String key(String id) {
        return id.contains(".") ? id.substring(0, id.indexOf('.')) : id;
    }

    @Override
    JobState state(String pbs) {
        return switch (pbs) {
            case "Q", "H", "W", "T", "S" -> JobState.QUEUED; // queued, held, waiting, moving, suspended
            case "R", "B" -> JobState.RUNNING; // running; B: an array job with running subjobs
            default -> JobState.DONE; // E (exiting), C (completed), F (finished), X
        };
    }

    @Override
    public void cancel(String jobId) throws IOException {
        Shell.Result r = shell.run(List.of("qdel", jobId));
        if (r.exit() != 0 && states(List.of(jobId)).get(jobId) != JobState.DONE) {
            throw new IOException("qdel " + jobId + " failed: " + (r.stdout() + r.stderr()).strip());
        }
    }
}
