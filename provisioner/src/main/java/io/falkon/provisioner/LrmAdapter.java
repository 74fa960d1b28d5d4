package io.falkon.provisioner;

import java.io.IOException;
import java.util.Collection;
import java.util.Map;

/**
 * A local resource manager (batch scheduler) as the provisioner uses it: submit an allocation
 * that starts one executor per node, ask where jobs are, cancel one. Implementations render a job
 * script and run the scheduler's own commands (sbatch/squeue/scancel, qsub/qstat/qdel, ...), in the
 * manner of PSI/J's batch executors. Every implementation passes {@code LrmAdapterContract}.
 */
public interface LrmAdapter {

    /** Short name: local, slurm, sge, pbs, cobalt. */
    String name();

    /** The job script {@link #submit} would send for this request. */
    String script(JobRequest request);

    /**
     * Submits the job.
     *
     * @return the scheduler's job id
     * @throws IOException naming the command and what it printed, if the scheduler refuses or cannot be run
     */
    String submit(JobRequest request) throws IOException;

    /** Where these jobs are; a job the scheduler no longer knows is {@link JobState#DONE}. */
    Map<String, JobState> states(Collection<String> jobIds) throws IOException;

    /** Cancels a job (a job already gone is not an error). */
    void cancel(String jobId) throws IOException;
}
