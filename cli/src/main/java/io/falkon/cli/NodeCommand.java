package io.falkon.cli;

import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.protocol.AdvertisedHost;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.auth.TokenSource;
import io.falkon.provisioner.Rendezvous;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code falkon node}: one node of an allocation in the tiered layout ({@code falkon provision
 * --layout tiered}), what the job script runs on every node. The first node to reach the rendezvous
 * runs the allocation's dispatcher and publishes its address; the others start the executor command
 * pointed at it. A one-node allocation runs both. Runs until the batch scheduler ends the job.
 */
@Command(name = "node", mixinStandardHelpOptions = true,
        description = "One node of a tiered allocation (started by falkon provision --layout tiered): the first "
                + "node runs the allocation's dispatcher, the others the executor command after --, pointed at it.")
final class NodeCommand implements Callable<Integer> {

    @Option(names = "--allocation", required = true, description = "the allocation's name (its rendezvous)")
    String allocation;

    @Option(names = "--nodes", description = "nodes in the allocation; with one, it runs both the dispatcher and "
            + "an executor (default: ${DEFAULT-VALUE})")
    int nodes = 1;

    @Option(names = "--rendezvous", required = true, paramLabel = "DIR", description = "a directory every node and "
            + "the provisioner share, where the dispatcher's address is published")
    Path rendezvous;

    @Option(names = "--token-file", paramLabel = "FILE", description = "the token the dispatcher requires and the "
            + "executors present")
    Path tokenFile;

    @Option(names = "--no-auth", description = "INSECURE: the dispatcher requires no token")
    boolean noAuth;

    @Option(names = "--port", description = "the dispatcher's TCP port (default: ${DEFAULT-VALUE}, a free one)")
    int port;

    @Option(names = "--advertise-host", paramLabel = "HOST", description = "the host name executors and clients "
            + "reach the dispatcher by (default: this host's name)")
    String advertiseHost;

    @Option(names = "--wait", paramLabel = "SECONDS", description = "how long an executor node waits for its "
            + "dispatcher's address (default: ${DEFAULT-VALUE})")
    long waitSeconds = 600;

    @Parameters(paramLabel = "EXECUTOR-COMMAND", arity = "1..*", description = "the executor command (after --); "
            + "--dispatcher HOST:PORT is added")
    List<String> executor;

    @Override
    public Integer call() throws Exception {
        Logging.level("INFO");
        if (noAuth == (tokenFile != null)) {
            throw new Falkon.UserError("give either --token-file or --no-auth");
        }
        Rendezvous rz = new Rendezvous(rendezvous, allocation);
        if (!rz.claimLead()) {
            String address = rz.awaitAddress(Duration.ofSeconds(waitSeconds));
            Process p = startExecutor(address);
            Runtime.getRuntime().addShutdownHook(new Thread(p::destroy, "falkon-node-stop"));
            return p.waitFor();
        }
        Token token = noAuth ? Token.none() : TokenSource.system().forServer(null, tokenFile).token();
        Dispatcher d = Dispatcher.start(DispatcherConfig.defaults().withPort(port).withToken(token)
                .withAdvertiseHost(advertiseHost));
        String address = AdvertisedHost.of(d.address(), advertiseHost) + ":" + d.port();
        Process own = nodes == 1 ? startExecutor(address) : null;
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                rz.withdraw();
            } catch (IOException e) {
                System.err.println("falkon node: cannot withdraw the dispatcher's address: " + e.getMessage());
            }
            if (own != null) {
                own.destroy();
            }
            d.close();
            stop.countDown();
        }, "falkon-node-stop"));
        d.failed().thenRun(stop::countDown);
        rz.publish(address);
        System.out.println("falkon node: " + allocation + "'s dispatcher at " + address);
        System.out.flush();
        stop.await();
        return d.failed().isDone() ? 1 : 0;
    }

    private Process startExecutor(String address) throws IOException {
        List<String> cmd = new ArrayList<>(executor);
        cmd.addAll(List.of("--dispatcher", address));
        return new ProcessBuilder(cmd).inheritIO().start();
    }
}
