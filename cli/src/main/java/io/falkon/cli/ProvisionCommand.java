package io.falkon.cli;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.executor.ConnectOptions;
import io.falkon.executor.LocalExecutors;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.auth.TokenSource;
import io.falkon.provisioner.LrmAdapter;
import io.falkon.provisioner.Provisioner;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
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
@Command(name = "provision", mixinStandardHelpOptions = true,
        description = "Grow and shrink a running dispatcher's executors through a batch scheduler, until stopped.")
final class ProvisionCommand implements Callable<Integer> {

    @Option(names = "--dispatcher", required = true, paramLabel = "HOST:PORT",
            description = "the dispatcher (executors are told this address too)")
    String dispatcher;

    @Mixin
    ConnectOptions connect = new ConnectOptions();

    @Option(names = "--slots", description = "slots of each node's executor (default: ${DEFAULT-VALUE})")
    int slots = 1;

    @Mixin
    ProvisionOptions provision;

    @Option(names = "--executor", paramLabel = "IMPL", description = "the executor the jobs start on each node: java "
            + "(falkon-executor.jar; needs a JRE there) or c (the C executor, no JVM) (default: ${DEFAULT-VALUE})")
    String executorImpl = "java";

    @Override
    public Integer call() throws Exception {
        Logging.level("INFO");
        if (!provision.enabled()) {
            throw new Falkon.UserError("--provisioner is required (local, slurm, sge, pbs or cobalt)");
        }
        LrmAdapter adapter = provision.adapter();
        Token token = connect.token().token();
        List<String> cmd;
        try {
            cmd = new ArrayList<>(LocalExecutors.command(LocalExecutors.Impl.parse(executorImpl)));
        } catch (IllegalArgumentException e) {
            throw new Falkon.UserError(e.getMessage());
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
            CountDownLatch stop = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                p.close(); // cancels what is still allocated
                stop.countDown();
            }, "falkon-provision-stop"));
            System.out.println("falkon provision: " + adapter.name() + " for " + dispatcher + " (stop with Ctrl-C; "
                    + "allocations are logged and left active ones cancelled)");
            System.out.flush();
            stop.await();
        } finally {
            if (adapter instanceof AutoCloseable c) {
                c.close();
            }
        }
        return 0;
    }
}
