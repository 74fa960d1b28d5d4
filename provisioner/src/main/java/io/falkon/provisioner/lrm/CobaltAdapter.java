package io.falkon.provisioner.lrm;

import io.falkon.provisioner.JobRequest;
import io.falkon.provisioner.JobState;
import io.falkon.provisioner.LrmAdapter;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

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
public final class CobaltAdapter implements LrmAdapter {
    private final Shell shell;
    private final int partitionNodes;

    /** @param partitionNodes allocation granularity in nodes (64 for a BG/P PSET; 1 for none) */
    public CobaltAdapter(Shell shell, int partitionNodes) {
        if (partitionNodes < 1) {
            throw new IllegalArgumentException("partition size must be at least 1 node");
        }
        this.shell = shell;
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
    public String submit(JobRequest r) throws IOException {
        Path file = r.workDir().resolve(r.name() + ".cobalt");
        Files.createDirectories(r.workDir());
        Files.writeString(file, script(r));
        file.toFile().setExecutable(true);
        String out = shell.check(List.of("qsub", "-n", Integer.toString(allocated(r.nodes())), "-t",
                Long.toString(r.wallMinutes()), "--mode", "script", "-O", r.workDir().resolve(r.name()).toString(),
                file.toString())).strip();
        String id = out.lines().reduce((a, b) -> b).orElse("").strip(); // the id is the last line
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
        List<String> cmd = new ArrayList<>(List.of("qstat"));
        cmd.addAll(jobIds);
        // JobID  User  WallTime  Nodes  State  Location, after a ===== line
        Map<String, JobState> seen = new HashMap<>();
        for (String line : shell.check(cmd).split("\n")) {
            String[] f = line.strip().split("\\s+");
            if (f.length >= 5 && f[0].matches("[0-9]+")) {
                seen.put(f[0], state(f[4]));
            }
        }
        for (String id : jobIds) {
            out.put(id, seen.getOrDefault(id, JobState.DONE));
        }
        return out;
    }

    static JobState state(String cobalt) {
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
