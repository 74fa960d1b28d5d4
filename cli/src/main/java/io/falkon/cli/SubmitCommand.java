package io.falkon.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.falkon.client.ClientOptions;
import io.falkon.client.DistributedClient;
import io.falkon.client.FalkonClient;
import io.falkon.client.FalkonException;
import io.falkon.executor.ConnectOptions;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;

@Command(name = "submit", mixinStandardHelpOptions = true, modelTransformer = SubmitCommand.WithWorkload.class,
        description = "Run a task file on a running dispatcher; exit 0 iff every task succeeded. With --detach, "
                + "return at once and come back later (falkon list, wait, results, cancel).")
final class SubmitCommand implements Callable<Integer> {
    /** One day: a detached instance outlives a night away from the terminal. */
    static final long DEFAULT_LEASE_SECONDS = 86_400;

    @ArgGroup(exclusive = true, multiplicity = "1")
    DispatcherAddress target;

    @Mixin
    ConnectOptions connect = new ConnectOptions();

    /** The options {@code falkon run} shares, from their model in code (see {@link WithWorkload}). */
    final WorkloadOptions workload = new WorkloadOptions();

    /** Adds the options shared with {@code falkon run}, whose model is built in code, to this annotated one. */
    static final class WithWorkload implements CommandLine.IModelTransformer {
        @Override
        public CommandSpec transform(CommandSpec spec) {
            WorkloadOptions w = ((SubmitCommand) spec.userObject()).workload;
            spec.addMixin("workload", w.model().spec());
            w.command = spec;
            return spec;
        }
    }

    @Option(names = "--detach", description = "submit every task, print the instance's id and return: the tasks "
            + "run on, the dispatcher keeps their results; see falkon list, wait, results, cancel")
    boolean detach;

    @Option(names = "--lease", paramLabel = "SECONDS", description = "with --detach: how long the dispatcher keeps "
            + "the instance and its results while no client is attached (default: ${DEFAULT-VALUE}, a day)")
    long leaseSeconds = DEFAULT_LEASE_SECONDS;

    @Option(names = "--failover-after", paramLabel = "SECONDS", description = "with several dispatchers: one that "
            + "has not answered for this long is taken as lost and its unfinished tasks go to the others; one that "
            + "comes back cancels them (default: 5; 0: only once its connection gives up, after 120 s)")
    double failoverAfterSeconds = ClientOptions.DEFAULT_FAILOVER_AFTER.toMillis() / 1000.0;

    @Option(names = "--store", paramLabel = "DIR", description = "the executors' shared store as this machine sees "
            + "it: inputs no task makes are checked there before anything is sent, and --skip-done looks there for "
            + "outputs (default: not looked at)")
    Path store;

    @Override
    public Integer call() throws Exception {
        Logging.level("WARN");
        if (store != null) {
            if (!Files.isDirectory(store)) {
                throw new Falkon.UserError("--store " + store + ": not a directory");
            }
            workload.storeRoot = store.toAbsolutePath();
        }
        if (detach && DistributedClient.isDistributed(target.address())) {
            throw new Falkon.UserError("--detach needs one dispatcher: an instance is taken over where it runs");
        }
        if (detach && target.ws != null) {
            throw new Falkon.UserError("--detach needs the dispatcher's TCP address (--dispatcher HOST:PORT): "
                    + "instances are taken over there later");
        }
        if (!(failoverAfterSeconds >= 0) || failoverAfterSeconds > 86_400) {
            throw new Falkon.UserError("--failover-after must be 0..86400 seconds, got " + failoverAfterSeconds);
        }
        if (leaseSeconds < 1) {
            throw new Falkon.UserError("--lease must be at least 1 second");
        }
        long total = workload.validate(connect);
        if (workload.nothingToRerun(total)) {
            return 0;
        }
        workload.haltPolicy(total); // a bad --halt is refused before anything is sent
        if (workload.dryRun) {
            return workload.printDryRun();
        }
        if (detach && workload.halt != null) {
            throw new Falkon.UserError("--halt needs a client watching the results: not with --detach");
        }
        if (detach) {
            return detach();
        }
        if (DistributedClient.isDistributed(target.address())) {
            // several dispatchers: the tasks are spread over them by their free capacity (docs/scaling.md)
            ClientOptions options = workload.clientOptions(connect)
                    .withFailoverAfter(Duration.ofMillis(Math.round(failoverAfterSeconds * 1000)));
            try (DistributedClient client = DistributedClient.connect(target.address(), options);
                 TaskFile file = workload.open()) {
                return workload.report(new Workload().watchingExecutors(client::status)
                        .run(() -> client.createInstance(workload.instanceName("falkon-cli")), file, total, workload));
            } catch (FalkonException e) {
                throw new Falkon.UserError(e.getMessage());
            }
        }
        try (FalkonClient client = FalkonClient.connect(target.address(), workload.clientOptions(connect));
             TaskFile file = workload.open()) {
            return workload.report(new Workload().watchingExecutors(client::status)
                    .run(client::createInstance, file, total, workload));
        }
    }

    private int detach() throws Exception {
        // nobody waits for the results here: no limit on unfinished tasks, the dispatcher queues them
        Workload.Detached d;
        try (FalkonClient client = FalkonClient.connect(target.address(), workload.clientOptions(connect)
                .withMaxInFlight(Integer.MAX_VALUE).withLeaseSeconds(leaseSeconds));
             TaskFile file = workload.open()) {
            d = new Workload().detach(client, file, workload.instanceName(fileName()), workload.selective());
        }
        // tasks from the command line (::: or --array) cannot be read again, as standard input cannot
        String file = workload.file == null || workload.file.equals("-") ? "-"
                : Path.of(workload.file).toAbsolutePath().normalize().toString();
        InstanceRecords.Record r = new InstanceRecords.Record(d.key(), target.address(), file, workload.template,
                workload.timeoutSeconds, workload.retriesOnFailure, d.tasks(), InstanceRecords.now(), d.lines());
        InstanceRecords.standard().save(r);
        if (workload.json) {
            ObjectNode o = new ObjectMapper().createObjectNode();
            o.put("instance", r.id());
            o.put("key", d.key());
            o.put("tasks", d.tasks());
            o.put("dispatcher", target.address());
            o.put("leaseSeconds", leaseSeconds);
            System.out.println(o);
        } else {
            System.out.println("instance " + r.id() + ": " + d.tasks() + " tasks submitted; they run on while no "
                    + "client is attached (lease " + leaseSeconds + " s)");
            String at = target.address();
            hint("falkon list --dispatcher " + at, "progress");
            hint("falkon wait " + r.id(), "until every task has finished");
            hint("falkon results " + r.id() + " --failed", "the failures, with their lines");
            if (workload.file != null && !workload.file.equals("-")) {
                hint("falkon submit --dispatcher " + at + " --rerun-failed " + r.id() + " " + workload.file,
                        "run those again");
            }
            System.out.println("its key, to reach it from another machine (keep it to yourself): " + d.key());
        }
        return 0;
    }

    private static void hint(String command, String what) {
        // what it does as a shell comment: a long command never runs into it, and the line can be pasted
        System.out.printf("  %-60s  # %s%n", command, what);
    }

    private String fileName() {
        if (workload.file == null) {
            return workload.array != null ? "array" : "arguments";
        }
        return workload.file.equals("-") ? "stdin" : Path.of(workload.file).getFileName().toString();
    }
}
