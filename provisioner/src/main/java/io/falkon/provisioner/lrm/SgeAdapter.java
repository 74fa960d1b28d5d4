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
 * (Son of) Grid Engine: {@code qsub} an array job with one task per node, each task holding the
 * node's slots through the parallel environment ({@code -pe smp S}) and running one executor;
 * {@code qstat} for the state; {@code qdel}. An array rather than one parallel job across hosts
 * because every task then starts its executor where SGE placed it, with no {@code qrsh -inherit}.
 */
public final class SgeAdapter implements LrmAdapter {
    private final Shell shell;
    private final String parallelEnvironment;

    /** @param parallelEnvironment the PE that gives a task several slots on one host (e.g. smp) */
    public SgeAdapter(Shell shell, String parallelEnvironment) {
        this.shell = shell;
        this.parallelEnvironment = parallelEnvironment;
    }

    @Override
    public String name() {
        return "sge";
    }

    @Override
    public String script(JobRequest r) {
        long m = r.wallMinutes();
        return "#!/bin/sh\n"
                + "#$ -N " + r.name() + "\n"
                + "#$ -t 1-" + r.nodes() + "\n"
                + "#$ -pe " + parallelEnvironment + " " + r.slotsPerNode() + "\n"
                + "#$ -l h_rt=" + String.format("%d:%02d:00", m / 60, m % 60) + "\n"
                + "#$ -o " + r.workDir().resolve(r.name() + ".out") + "\n"
                + "#$ -j y\n"
                + "#$ -S /bin/sh\n"
                + "# one Falkon executor per array task (node); the job ends when they have all left\n"
                + r.nodeCommand() + "\n";
    }

    @Override
    public String submit(JobRequest r) throws IOException {
        Path file = r.workDir().resolve(r.name() + ".sge");
        Files.createDirectories(r.workDir());
        Files.writeString(file, script(r));
        String out = shell.check(List.of("qsub", "-terse", file.toString())).strip();
        // an array job prints ID.FIRST-LAST:STEP
        String id = out.contains(".") ? out.substring(0, out.indexOf('.')) : out;
        if (!id.matches("[0-9]+")) {
            throw new IOException("qsub printed '" + out + "', not a job id");
        }
        return id;
    }

    @Override
    public Map<String, JobState> states(Collection<String> jobIds) throws IOException {
        Map<String, JobState> out = new HashMap<>();
        if (jobIds.isEmpty()) {
            return out;
        }
        // job-ID prior name user state submit/start-at queue slots ja-task-ID: one line per running
        // task and one for the pending ones; a job gone from qstat has ended
        Map<String, JobState> seen = new HashMap<>();
        for (String line : shell.check(List.of("qstat", "-u", "*")).split("\n")) {
            String[] f = line.strip().split("\\s+");
            if (f.length < 5 || !f[0].matches("[0-9]+")) {
                continue;
            }
            JobState s = state(f[4]);
            seen.merge(f[0], s, (a, b) -> a == JobState.RUNNING || b == JobState.RUNNING ? JobState.RUNNING
                    : a == JobState.QUEUED || b == JobState.QUEUED ? JobState.QUEUED : JobState.DONE);
        }
        for (String id : jobIds) {
            out.put(id, seen.getOrDefault(id, JobState.DONE));
        }
        return out;
    }

    static JobState state(String sge) {
        if (sge.contains("d")) {
            return JobState.DONE; // being deleted
        }
        if (sge.contains("r") || sge.contains("t")) {
            return JobState.RUNNING; // running, transferring (also Rr, restarted)
        }
        return JobState.QUEUED; // qw, hqw, Eqw (error: held until someone clears it)
    }

    @Override
    public void cancel(String jobId) throws IOException {
        Shell.Result r = shell.run(List.of("qdel", jobId));
        if (r.exit() != 0 && !(r.stdout() + r.stderr()).contains("does not exist")) {
            throw new IOException("qdel " + jobId + " failed: " + (r.stdout() + r.stderr()).strip());
        }
    }
}
