package io.falkon.cli;

import io.falkon.client.ClientOptions;
import io.falkon.client.DistributedClient;
import io.falkon.client.FalkonClient;
import io.falkon.executor.ConnectOptions;
import io.falkon.executor.LocalExecutors;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.auth.TokenSource;
import io.falkon.provisioner.LrmAdapter;
import io.falkon.provisioner.Provisioner;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code falkon provision}: the provisioner as its own process beside a running dispatcher (a
 * long-lived service whose executors come from the batch scheduler). Runs until stopped, then
 * cancels the allocations still active.
 */
@Command(name = "provision", mixinStandardHelpOptions = true, modelTransformer = ProvisionCommand.WithProvision.class,
        description = "Grow and shrink a running dispatcher's executors through a batch scheduler, until stopped.")
final class ProvisionCommand implements Callable<Integer> {

    @Mixin
    StdinLifeline lifeline = new StdinLifeline();

    @Option(names = "--dispatcher", paramLabel = "HOST:PORT",
            description = "the dispatcher (executors are told this address too); not with --layout tiered")
    String dispatcher;

    @Option(names = "--layout", description = "flat (every node an executor of --dispatcher) or tiered (each "
            + "allocation runs its own dispatcher on one node and executors on the rest, Falkon on Blue Gene/P; "
            + "clients follow --dispatchers-file) (default: ${DEFAULT-VALUE})")
    String layout = "flat";

    @Option(names = "--dispatchers-file", paramLabel = "FILE", description = "tiered: the file listing the "
            + "allocations' dispatchers, kept up to date, for falkon submit/status --dispatchers-file "
            + "(default: ~/.falkon/dispatchers)")
    Path dispatchersFile;

    @Mixin
    ConnectOptions connect = new ConnectOptions();

    @Option(names = "--slots", description = "slots of each node's executor (default: ${DEFAULT-VALUE})")
    int slots = 1;

    /** The options {@code falkon run --provisioner} shares, from their model in code (see {@link WithProvision}). */
    final ProvisionOptions provision = new ProvisionOptions();

    /** Adds the options shared with {@code falkon run}, whose model is built in code, to this annotated one. */
    static final class WithProvision implements CommandLine.IModelTransformer {
        @Override
        public CommandSpec transform(CommandSpec spec) {
            spec.addMixin("provision", ((ProvisionCommand) spec.userObject()).provision.model().spec());
            return spec;
        }
    }

    @Option(names = "--executor", paramLabel = "IMPL", description = "the executor the jobs start on each node: java "
            + "(falkon-executor.jar; needs a JRE there), c (the C executor, no JVM), or auto: c when it is built "
            + "here (the nodes run it from the same path: a shared file system), else java (default: ${DEFAULT-VALUE})")
    String executorImpl = "auto";

    @Override
    public Integer call() throws Exception {
        Logging.level("INFO");
        if (!provision.enabled()) {
            throw new Falkon.UserError("--provisioner is required (local, slurm, sge, pbs or cobalt)");
        }
        boolean tiered = switch (layout) {
            case "flat" -> false;
            case "tiered" -> true;
            default -> throw new Falkon.UserError("--layout must be flat or tiered, got '" + layout + "'");
        };
        if (tiered == (dispatcher != null)) {
            throw new Falkon.UserError(tiered ? "--layout tiered starts its own dispatchers: no --dispatcher"
                    : "--dispatcher HOST:PORT is required (or --layout tiered)");
        }
        if (!tiered && dispatchersFile != null) {
            throw new Falkon.UserError("--dispatchers-file goes with --layout tiered");
        }
        if (tiered && connect.usesTls()) {
            throw new Falkon.UserError("--layout tiered does not start its dispatchers with TLS yet");
        }
        LrmAdapter adapter = provision.adapter();
        Token token = connect.token().token();
        if (tiered && !token.required()) {
            token = TokenSource.system().forServer(null, null).token(); // the dispatchers it starts require one
        }
        List<String> cmd;
        try {
            cmd = new ArrayList<>(LocalExecutors.command(impl()));
        } catch (IllegalArgumentException e) {
            throw new Falkon.UserError(e.getMessage());
        }
        if (tiered) {
            runTiered(adapter, cmd, token);
            return 0;
        }
        cmd.addAll(List.of("--dispatcher", dispatcher));
        if (connect.tlsCa() != null) {
            cmd.addAll(List.of("--tls-ca", connect.tlsCa().toAbsolutePath().toString()));
        } else if (connect.usesTls()) {
            cmd.add("--tls");
        }
        Path work = TokenSource.system().home().resolve("jobs");
        try (FalkonClient client = FalkonClient.connect(dispatcher, ClientOptions.defaults().withToken(token.value())
                .withTls(connect.tls()))) {
            Provisioner p = Provisioner.start(provision.config(slots, cmd, work, token), adapter, client::status);
            System.out.println("falkon provision: " + adapter.name() + " for " + dispatcher + " (stop with Ctrl-C; "
                    + "allocations are logged and left active ones cancelled)");
            lifeline.startIfAsked("falkon provision");
            untilStopped(p);
        } finally {
            closeAdapter(adapter);
        }
        return 0;
    }

    /** The tiered layout: no dispatcher to watch but the allocations' own, through the dispatchers file. */
    private void runTiered(LrmAdapter adapter, List<String> executorCommand, Token token) throws Exception {
        Path home = TokenSource.system().home();
        Path file = (dispatchersFile != null ? dispatchersFile : home.resolve("dispatchers")).toAbsolutePath();
        List<String> node = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
                "-Xmx512m", "-cp", System.getProperty("java.class.path"), Falkon.class.getName(), "node"));
        Provisioner.Config config = provision.config(slots, executorCommand, home.resolve("jobs"), token,
                new Provisioner.Tiered(node, file));
        try (DistributedClient all = DistributedClient.connect(DistributedClient.FILE_PREFIX + file,
                ClientOptions.defaults().withClientName("falkon-provision").withToken(token.value()))) {
            Provisioner p = Provisioner.start(config, adapter, all::status);
            System.out.println("falkon provision: " + adapter.name() + ", a dispatcher per allocation, listed in "
                    + file + " (falkon submit --dispatchers-file " + file + "; stop with Ctrl-C: allocations "
                    + "are logged and left active ones cancelled)");
            lifeline.startIfAsked("falkon provision");
            untilStopped(p);
        } finally {
            closeAdapter(adapter);
        }
    }

    private LocalExecutors.Impl impl() {
        return executorImpl.equalsIgnoreCase("auto") ? LocalExecutors.Impl.fastest()
                : LocalExecutors.Impl.parse(executorImpl);
    }

    private static void untilStopped(Provisioner p) throws InterruptedException {
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            p.close(); // cancels what is still allocated
            stop.countDown();
        }, "falkon-provision-stop"));
        System.out.flush();
        stop.await();
    }

    private static void closeAdapter(LrmAdapter adapter) throws Exception {
        if (adapter instanceof AutoCloseable c) {
            c.close();
        }
    }
}
