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

    @Option(names = "--policy", description = "dispatch policy: first-available (fa), max-cache-hit (mch), "
            + "max-compute-util (mcu), good-cache-compute (gcc) (default: ${DEFAULT-VALUE})")
    String policy = "first-available";

    @Option(names = "--window", description = "tasks the data-aware policies look at from the head of the queue "
            + "(default: 100 per executor)")
    int window;

    @Option(names = "--gcc-threshold", description = "good-cache-compute's utilization threshold: max-cache-hit "
            + "at or above it, max-compute-util below (default: ${DEFAULT-VALUE})")
    double gccThreshold = 0.9;

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

    @Option(names = "--journal", paramLabel = "DIR", description = "keep an append-only journal in DIR so that "
            + "accepted tasks and undelivered results survive a restart (default: none)")
    java.nio.file.Path journal;

    @Option(names = "--fsync", description = "journal durability: ALWAYS (fsync each batch before replying), BATCH "
            + "(fsync every 50 ms), NEVER (default: ${DEFAULT-VALUE})")
    io.falkon.dispatcher.journal.FsyncPolicy fsync = io.falkon.dispatcher.journal.FsyncPolicy.BATCH;

    @Option(names = "--retries", description = "re-dispatches after framework failures, for tasks that set none "
            + "(default: ${DEFAULT-VALUE})")
    int retries = 3;

    @Option(names = "--dispatch-timeout", paramLabel = "SECONDS", description = "a dispatched task without a "
            + "result after this long is presumed lost and dispatched again (default: 0 = only tasks with a wall "
            + "time, after wall time + 60 s)")
    long dispatchTimeoutSeconds;

    @Option(names = "--suspend-after", description = "failures within the window that suspend an executor "
            + "while others succeed (default: ${DEFAULT-VALUE}; 0 = never)")
    int suspendAfter = 5;

    @Option(names = "--suspend-window", paramLabel = "SECONDS", description = "(default: ${DEFAULT-VALUE})")
    long suspendWindowSeconds = 60;

    @Option(names = "--suspend-for", paramLabel = "SECONDS", description = "(default: ${DEFAULT-VALUE})")
    long suspendForSeconds = 120;

    @Option(names = "--max-memory", paramLabel = "MIB", description = "queued tasks "
            + "above this pause reading from clients (default: half the heap)")
    Long maxMemoryMiB;

    @Option(names = "--ws-port", description = "also serve the Web Services (SOAP) interface on this HTTP port "
            + "(0 picks a free one; default: off); WSDL at http://HOST:PORT/axis2/services/Falkon?wsdl")
    Integer wsPort;

    @Option(names = "--ws-max-bundle", description = "most tasks one WS Submit may carry (default: ${DEFAULT-VALUE})")
    int wsMaxBundle = io.falkon.dispatcher.ws.WsTransport.Settings.defaults().maxBundle();

    @Override
    public Integer call() throws Exception {
        DispatcherConfig cfg;
        Dispatcher d;
        try {
            io.falkon.dispatcher.core.SchedulerConfig sc = io.falkon.dispatcher.core.SchedulerConfig.defaults()
                    .withDefaultRetries(retries).withDispatchTimeoutMillis(dispatchTimeoutSeconds * 1000)
                    .withSuspension(suspendAfter, suspendWindowSeconds * 1000, suspendForSeconds * 1000)
                    .withWindowSize(window);
            if (maxMemoryMiB != null) {
                sc = sc.withMemoryBudgetBytes(maxMemoryMiB << 20);
            }
            cfg = DispatcherConfig.defaults().withBindHost(host).withPort(port).withToken(token)
                    .withIoThreads(ioThreads).withHeartbeatMillis(heartbeatMillis)
                    .withPolicy(DispatchPolicies.byName(policy, gccThreshold)).withScheduler(sc).withJournal(journal, fsync)
                    .withWs(wsPort == null ? -1 : wsPort,
                            io.falkon.dispatcher.ws.WsTransport.Settings.defaults().withMaxBundle(wsMaxBundle));
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
        if (d.wsUrl() != null) {
            System.out.println("falkon dispatcher WS interface at " + d.wsUrl() + " (WSDL: " + d.wsUrl() + "?wsdl)");
        }
        System.out.flush();
        stop.await();
        return 0;
    }
}
