package io.falkon.dispatcher;

import io.falkon.dispatcher.policy.DispatchPolicies;
import io.falkon.protocol.Protocol;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/** {@code falkon dispatcher}; {@link #main} runs it on its own. */
@Command(name = "dispatcher", mixinStandardHelpOptions = true,
        description = "Run a dispatcher: executors and clients connect to it.")
public final class DispatcherCommand implements Callable<Integer> {

    @Option(names = "--port", description = "TCP port (default: ${DEFAULT-VALUE}; 0 picks a free one)")
    int port = Protocol.DEFAULT_PORT;

    @Option(names = "--host", description = "address to listen on (default: ${DEFAULT-VALUE}, all interfaces)")
    String host = "0.0.0.0";

    @Option(names = "--policy", description = "dispatch policy (default: ${DEFAULT-VALUE})")
    String policy = "first-available";

    @Option(names = "--token", description = "shared secret executors and clients must present")
    String token = "";

    @Option(names = "--io-threads", description = "Netty I/O threads (default: cores)")
    int ioThreads = Runtime.getRuntime().availableProcessors();

    @Option(names = "--heartbeat", description = "heartbeat interval in ms; a peer silent for 3 intervals is "
            + "dropped (default: ${DEFAULT-VALUE}; 0 = off)")
    long heartbeatMillis = 5000;

    public static void main(String[] args) {
        System.exit(new CommandLine(new DispatcherCommand()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        DispatcherConfig cfg;
        Dispatcher d;
        try {
            cfg = DispatcherConfig.defaults().withBindHost(host).withPort(port).withToken(token)
                    .withIoThreads(ioThreads).withHeartbeatMillis(heartbeatMillis)
                    .withPolicy(DispatchPolicies.byName(policy));
            d = Dispatcher.start(cfg);
        } catch (IllegalArgumentException | IllegalStateException e) {
            System.err.println("falkon dispatcher: " + e.getMessage());
            return 2;
        }
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            d.close();
            stop.countDown();
        }, "falkon-shutdown"));
        System.out.println("falkon dispatcher listening on " + host + ":" + d.port());
        System.out.flush();
        stop.await();
        return 0;
    }
}
