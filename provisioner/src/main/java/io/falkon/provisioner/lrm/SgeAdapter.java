package io.falkon.provisioner.lrm;

import io.falkon.provisioner.JobRequest;
import io.falkon.provisioner.JobState;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;

/**
 * (Son of) Grid Engine: {@code qsub} an array job with one task per node, each task holding the
 * node's slots through the parallel environment ({@code -pe smp S}) and running one executor;
 * {@code qstat} for the state; {@code qdel}. An array rather than one parallel job across hosts
 * because every task then starts its executor where SGE placed it, with no {@code qrsh -inherit}.
 */
public final class SgeAdapter extends BatchAdapter {
    private final String parallelEnvironment;

    /** @param parallelEnvironment the PE that gives a task several slots on one host (e.g. smp) */
    public SgeAdapter(Shell shell, String parallelEnvironment) {
        super(shell);
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
                // the usual name of a site's GPU consumable (a complex each site defines); per slot in
                // SGE, so the node's GPUs are spread over the slots the parallel environment asks for
                + (r.gpusPerNode() > 0 ? "#$ -l gpu=" + divideUp(r.gpusPerNode(), r.slotsPerNode()) + "\n" : "")
                + "#$ -o " + r.workDir().resolve(r.name() + ".out") + "\n"
                + "#$ -j y\n"
                + "#$ -S /bin/sh\n"
                // qdel ends a job with SIGKILL, so an executor cannot remove its spool directory
                // then: in the job's own TMPDIR, which SGE removes with the job, nothing stays
                // behind; where an installation gives none, it goes beside the job's files, not /tmp
                + "[ -n \"$TMPDIR\" ] || { TMPDIR=" + JobRequest.quote(r.workDir().toString()) + "; export TMPDIR; }\n"
                + "# one Falkon executor per array task (node); the job ends when they have all left\n"
                + r.nodeCommand() + "\n";
    }

    @Override
    String scriptSuffix() {
        return ".sge";
    }

    @Override
    List<String> submitCommand(JobRequest r, Path script) {
        return List.of("qsub", "-terse", script.toString());
    }

    @Override
    String jobId(String out) {
        String id = out.contains(".") ? out.substring(0, out.indexOf('.')) : out; // an array job: ID.FIRST-LAST:STEP
        return id.matches("[0-9]+") ? id : null;
    }

    @Override
    List<String> statusCommand(Collection<String> jobIds) {
        // job-ID prior name user state ...: one row per running array task and one for the pending ones
        return List.of("qstat", "-u", "*");
    }

    @Override
    int stateColumn() {
        return 4;
    }

    @Override
    JobState state(String sge) {
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

    private static int divideUp(int a, int b) {
        return (a + b - 1) / b;
    }
}
