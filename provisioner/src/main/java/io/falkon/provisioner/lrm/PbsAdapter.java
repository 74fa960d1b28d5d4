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
 * PBS: {@code qsub} / {@code qstat} / {@code qdel}, with Torque's resource syntax
 * ({@code -l nodes=N:ppn=S}) or PBS Pro's ({@code -l select=N:ncpus=S}). The script starts one
 * executor per node with {@code pbsdsh -u} where PBS provides it; on a PBS interface over a SLURM
 * back end (Slurm's Torque wrappers, which is what the tests here run against: PBS syntax, not PBS
 * itself) it uses {@code srun}; on one node, the executor directly.
 */
public final class PbsAdapter implements LrmAdapter {

    /** Which PBS dialect the scheduler speaks. */
    public enum Flavor { TORQUE, PRO }

    private final Shell shell;
    private final Flavor flavor;

    public PbsAdapter(Shell shell, Flavor flavor) {
        this.shell = shell;
        this.flavor = flavor;
    }

    @Override
    public String name() {
        return "pbs";
    }

    @Override
    public String script(JobRequest r) {
        long m = r.wallMinutes();
        String resources = flavor == Flavor.TORQUE ? "nodes=" + r.nodes() + ":ppn=" + r.slotsPerNode()
                : "select=" + r.nodes() + ":ncpus=" + r.slotsPerNode() + ":mpiprocs=1";
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
    public String submit(JobRequest r) throws IOException {
        Path file = r.workDir().resolve(r.name() + ".pbs");
        Files.createDirectories(r.workDir());
        Files.writeString(file, script(r));
        String out = shell.check(List.of("qsub", file.toString())).strip();
        // Torque and PBS Pro print SEQ.SERVER; the Slurm wrappers a bare number
        if (!out.matches("[0-9]+(\\[\\])?(\\.[A-Za-z0-9_.-]+)?")) {
            throw new IOException("qsub printed '" + out + "', not a job id");
        }
        return out;
    }

    @Override
    public Map<String, JobState> states(Collection<String> jobIds) throws IOException {
        Map<String, JobState> out = new HashMap<>();
        if (jobIds.isEmpty()) {
            return out;
        }
        // Job id  Name  User  Time Use  S  Queue
        Map<String, JobState> seen = new HashMap<>();
        for (String line : shell.check(List.of("qstat")).split("\n")) {
            String[] f = line.strip().split("\\s+");
            if (f.length >= 6 && f[0].matches("[0-9].*")) {
                seen.put(f[0], state(f[4]));
            }
        }
        for (String id : jobIds) {
            JobState s = seen.get(id);
            if (s == null) {
                // qstat may show SEQ.SERVER cut short, or the bare SEQ
                String seq = id.contains(".") ? id.substring(0, id.indexOf('.')) : id;
                for (Map.Entry<String, JobState> e : seen.entrySet()) {
                    if (e.getKey().equals(seq) || e.getKey().startsWith(seq + ".")) {
                        s = e.getValue();
                    }
                }
            }
            out.put(id, s == null ? JobState.DONE : s);
        }
        return out;
    }

    static JobState state(String pbs) {
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
