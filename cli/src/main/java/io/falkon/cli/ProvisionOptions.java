package io.falkon.cli;

import io.falkon.protocol.auth.Token;
import io.falkon.provisioner.AcquisitionPolicy;
import io.falkon.provisioner.LrmAdapter;
import io.falkon.provisioner.Provisioner;
import io.falkon.provisioner.ReleasePolicy;
import io.falkon.provisioner.Planner;
import io.falkon.provisioner.lrm.CobaltAdapter;
import io.falkon.provisioner.lrm.LocalAdapter;
import io.falkon.provisioner.lrm.PbsAdapter;
import io.falkon.provisioner.lrm.SgeAdapter;
import io.falkon.provisioner.lrm.Shell;
import io.falkon.provisioner.lrm.SlurmAdapter;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** {@code falkon run --provisioner …}: executors come from a batch scheduler as the queue needs them. */
final class ProvisionOptions {

    /** These options on the command line, bound to the fields below (built in code: see {@link CommandModel}). */
    CommandModel model() {
        return CommandModel.of(this)
                .option("lrm", "--provisioner=LRM", "start with no executors and get them from a "
                        + "batch scheduler as tasks queue up: local, slurm, sge, pbs or cobalt (see docs/provisioning.md)")
                .option("pe", "--pe", "sge: the parallel environment that gives a job several slots on one host "
                        + "(default: ${DEFAULT-VALUE})")
                .option("pbsFlavor", "--pbs-flavor", "pbs: torque (-l nodes=N:ppn=S) or pro (-l select=N:ncpus=S) "
                        + "(default: ${DEFAULT-VALUE})")
                .option("partitionNodes", "--partition-nodes", "cobalt: nodes per partition, the allocation granularity "
                        + "(default: ${DEFAULT-VALUE}, a Blue Gene/P PSET)")
                .option("acquisition", "--acquisition", "how many nodes to ask for at a time: one-at-a-time, additive, "
                        + "exponential, all-at-once, optimal (default: ${DEFAULT-VALUE})")
                .option("release", "--release", "distributed (each executor leaves after --idle seconds) or "
                        + "centralized (the provisioner cancels idle allocations once the queue stays below --queue-below) "
                        + "(default: distributed; centralized with falkon provision --layout tiered, which only releases whole "
                        + "allocations)")
                .option("idleSeconds", "--idle=SECONDS", "idle time before release; 0 = keep nodes for "
                        + "their wall time (default: ${DEFAULT-VALUE})")
                .option("queueBelow", "--queue-below", "centralized release: the queue length under which idle "
                        + "allocations go back (default: ${DEFAULT-VALUE})")
                .option("minNodes", "--min-nodes", "nodes to keep at all times (default: ${DEFAULT-VALUE})")
                .option("maxNodes", "--max-nodes", "most nodes at once (default: ${DEFAULT-VALUE})")
                .option("nodesPerAllocation", "--nodes-per-allocation", "most nodes in one request (default: --max-nodes)")
                .option("gpusPerNode", "--gpus-per-node", "GPUs to ask for on each node, only while queued tasks "
                        + "ask for GPUs (Slurm --gres=gpu:N, SGE -l gpu, PBS gpus/ngpus; default: ${DEFAULT-VALUE})")
                .option("wallMinutes", "--wall-time=MINUTES", "wall time of each allocation "
                        + "(default: ${DEFAULT-VALUE})")
                .option("taskSeconds", "--task-seconds", "expected mean task time, for the optimal policy "
                        + "(default: ${DEFAULT-VALUE})")
                .option("allocationDelay", "--allocation-delay=SECONDS", "local only: emulated time a request "
                        + "waits in the queue before its executors start (default: ${DEFAULT-VALUE})")
                .option("pollMillis", "--poll=MS", "how often the provisioner looks (default: ${DEFAULT-VALUE})");
    }

    String lrm;
    String pe = "smp";
    int gpusPerNode = 1;
    String pbsFlavor = "torque";
    int partitionNodes = 64;
    String acquisition = "exponential";
    String release;
    double idleSeconds = 30;
    long queueBelow = 1;
    int minNodes;
    int maxNodes = 4;
    Integer nodesPerAllocation;
    long wallMinutes = 60;
    double taskSeconds = 1;
    double allocationDelay;
    long pollMillis = 500;

    boolean enabled() {
        return lrm != null;
    }

    LrmAdapter adapter() {
        return switch (lrm) {
            case "local" -> new LocalAdapter(Duration.ofMillis(Math.round(allocationDelay * 1000)));
            case "slurm" -> new SlurmAdapter(new Shell());
            case "sge" -> new SgeAdapter(new Shell(), pe);
            case "pbs" -> new PbsAdapter(new Shell(), switch (pbsFlavor) {
                case "torque" -> PbsAdapter.Flavor.TORQUE;
                case "pro" -> PbsAdapter.Flavor.PRO;
                default -> throw new Falkon.UserError("--pbs-flavor must be torque or pro");
            });
            case "cobalt" -> new CobaltAdapter(new Shell(), partitionNodes);
            default -> throw new Falkon.UserError("unknown --provisioner '" + lrm
                    + "' (local, slurm, sge, pbs or cobalt)");
        };
    }

    /** The provisioner's settings; its executors present {@code token}. */
    Provisioner.Config config(int slotsPerNode, List<String> executorCommand, Path workDir, Token token) {
        return config(slotsPerNode, executorCommand, workDir, token, null);
    }

    /**
     * The provisioner's settings, in the tiered layout when {@code tiered} is given: then release is
     * centralized unless set (an allocation's dispatcher stays while the allocation does, so only whole
     * allocations go back), and at least one allocation is kept (clients have nowhere else to send work).
     */
    Provisioner.Config config(int slotsPerNode, List<String> executorCommand, Path workDir, Token token,
                              Provisioner.Tiered tiered) {
        try {
            Duration idle = Duration.ofMillis(Math.round(Math.max(0, idleSeconds) * 1000));
            String how = release != null ? release : tiered != null ? "centralized" : "distributed";
            if (tiered != null && how.equals("distributed")) {
                throw new IllegalArgumentException("--layout tiered releases whole allocations: use --release "
                        + "centralized (the default there)");
            }
            int perAllocation = nodesPerAllocation == null ? maxNodes : nodesPerAllocation;
            int floor = tiered != null ? Math.max(minNodes, Math.min(perAllocation, maxNodes)) : minNodes;
            ReleasePolicy rp = switch (how) {
                case "distributed" -> ReleasePolicy.distributed(idle);
                case "centralized" -> ReleasePolicy.centralized(idle, queueBelow);
                default -> throw new IllegalArgumentException("--release must be distributed or centralized");
            };
            return new Provisioner.Config(new Planner.Bounds(floor, maxNodes, perAllocation, slotsPerNode,
                    wallMinutes * 60, taskSeconds, gpusPerNode), AcquisitionPolicy.byName(acquisition), rp, executorCommand,
                    Duration.ofMillis(pollMillis), workDir, "falkon" + ProcessHandle.current().pid(), token, tiered);
        } catch (IllegalArgumentException e) {
            throw new Falkon.UserError(e.getMessage());
        }
    }
}
