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
 * What the batch schedulers' adapters share: the job script is written to the job's work directory
 * and handed to a submit command whose output holds the job id; the states come from one status
 * command whose table has a job id column and a state column, and a job not in the table has
 * ended. Each scheduler supplies its script, commands and state names.
 */
abstract class BatchAdapter implements LrmAdapter {
    protected final Shell shell;

    BatchAdapter(Shell shell) {
        this.shell = shell;
    }

    /** File name suffix of the job script, e.g. {@code .sbatch}. */
    abstract String scriptSuffix();

    /** The command that submits {@code script}. */
    abstract List<String> submitCommand(JobRequest r, Path script);

    /** The job id in what the submit command printed, or null if there is none. */
    abstract String jobId(String submitOutput);

    /** The command that lists jobs (all of them, or those given). */
    abstract List<String> statusCommand(Collection<String> jobIds);

    /** Column of the state in a row of the status table (the id is column 0). */
    abstract int stateColumn();

    /** The scheduler's state name as a {@link JobState}. */
    abstract JobState state(String name);

    /** The key under which a job id and a status row's id are compared (e.g. without a server suffix). */
    String key(String id) {
        return id;
    }

    @Override
    public final String submit(JobRequest r) throws IOException {
        Path file = r.workDir().resolve(r.name() + scriptSuffix());
        Files.createDirectories(r.workDir());
        Files.writeString(file, script(r));
        List<String> cmd = submitCommand(r, file);
        String out = shell.check(cmd, r.workDir()).strip();
        String id = jobId(out);
        if (id == null) {
            throw new IOException(cmd.get(0) + " printed '" + out + "', not a job id");
        }
        return id;
    }

    @Override
    public final Map<String, JobState> states(Collection<String> jobIds) throws IOException {
        Map<String, JobState> out = new HashMap<>();
        if (jobIds.isEmpty()) {
            return out;
        }
        // a job may have several rows (array tasks): the liveliest state wins
        Map<String, JobState> seen = new HashMap<>();
        for (String line : statusTable(statusCommand(jobIds)).split("\n")) {
            String[] f = line.strip().split("\\s+");
            if (f.length > stateColumn() && f[0].matches("[0-9].*")) {
                seen.merge(key(f[0]), state(f[stateColumn()]), BatchAdapter::livelier);
            }
        }
        for (String id : jobIds) {
            out.put(id, seen.getOrDefault(key(id), JobState.DONE));
        }
        return out;
    }

    /** Runs the status command; its output. */
    String statusTable(List<String> cmd) throws IOException {
        return shell.check(cmd);
    }

    private static JobState livelier(JobState a, JobState b) {
        if (a == JobState.RUNNING || b == JobState.RUNNING) {
            return JobState.RUNNING;
        }
        return a == JobState.QUEUED || b == JobState.QUEUED ? JobState.QUEUED : JobState.DONE;
    }
}
