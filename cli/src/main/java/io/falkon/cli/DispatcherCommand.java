package io.falkon.cli;

import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;

import io.falkon.dispatcher.core.SchedulerConfig;
import io.falkon.dispatcher.journal.FsyncPolicy;
import io.falkon.dispatcher.policy.DispatchPolicies;
import io.falkon.transport.ws.WsTransport;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.auth.TokenSource;
import io.falkon.protocol.tls.Tls;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/** {@code falkon dispatcher}; {@link #main} runs it on its own. */
@Command(name = "dispatcher", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Run a dispatcher: executors and clients connect to it. Callers must present its token "
                + "(see docs/security.md): by default it is read from, or written to, ~/.falkon/token.")
public final class DispatcherCommand implements Callable<Integer> {
    /** Exit status when the scheduler failed and the dispatcher stopped (a supervisor restarts it with its journal). */
    public static final int EXIT_FAILED = 70;

    @Option(names = "--port", description = "TCP port (default: ${DEFAULT-VALUE}; 0 picks a free one)")
    int port = Protocol.DEFAULT_PORT;

    @Option(names = "--host", description = "address to listen on (default: ${DEFAULT-VALUE}, all interfaces)")
    String host = "0.0.0.0";

    @Option(names = "--advertise-host", paramLabel = "HOST", description = "the host name put in the addresses the "
            + "dispatcher hands out (the WSDL, WS instance references) (default: the listen address, or this host's "
            + "name)")
    String advertiseHost;

    @Option(names = "--token-file", paramLabel = "FILE", description = "read the token callers must present from "
            + "FILE (default: $FALKON_TOKEN, else ~/.falkon/token, created with a new random token if missing)")
    Path tokenFile;

    @Option(names = "--token", paramLabel = "TOKEN", description = "the token itself (visible to ps: prefer "
            + "--token-file or $FALKON_TOKEN)")
    String token;

    @Option(names = "--no-auth", description = "INSECURE: require no token, so that anyone who can reach the ports "
            + "can run commands as this user. Only for a closed network.")
    boolean noAuth;

    @Option(names = "--tls-cert", paramLabel = "PEM", description = "TLS on the TCP and WS ports: this certificate "
            + "chain (with --tls-key)")
    Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "PEM", description = "the private key of --tls-cert (PKCS#8 PEM)")
    Path tlsKey;

    @Option(names = "--policy", description = "dispatch policy: first-available (fa), max-cache-hit (mch), "
            + "max-compute-util (mcu), good-cache-compute (gcc) (default: ${DEFAULT-VALUE})")
    String policy = "first-available";

    @Option(names = "--window", description = "tasks the data-aware policies look at from the head of the queue "
            + "(default: 100 per executor)")
    int window;

    @Option(names = "--gcc-threshold", description = "good-cache-compute's utilization threshold: max-cache-hit "
            + "at or above it, max-compute-util below (default: ${DEFAULT-VALUE})")
    double gccThreshold = 0.9;

    @Option(names = "--no-multicast", description = "do not copy an object most queued tasks read to every "
            + "executor along a tree ahead of them (data-aware policies; docs/data-diffusion.md)")
    boolean noMulticast;

    @Option(names = "--share-file", paramLabel = "FILE", description = "shares of the executors between instances, "
            + "one 'NAME SHARE' line per instance name (default: every instance an equal share); a client's "
            + "priorities order only its own tasks")
    Path shareFile;

    @Option(names = "--io-threads", description = "Netty I/O threads (default: cores)")
    int ioThreads = Runtime.getRuntime().availableProcessors();

    @Option(names = "--heartbeat", description = "heartbeat interval in ms; a peer silent for 3 intervals is "
            + "dropped (default: ${DEFAULT-VALUE}; 0 = off)")
    long heartbeatMillis = 5000;

    @Option(names = "--max-task-bytes", description = "largest task spec accepted, over TCP and WS "
            + "(default: ${DEFAULT-VALUE})")
    int maxTaskBytes = 1 << 20;

    @Option(names = "--journal", paramLabel = "DIR", description = "keep an append-only journal in DIR so that "
            + "accepted tasks and undelivered results survive a restart (default: none)")
    Path journal;

    @Option(names = "--fsync", description = "journal durability: ALWAYS (fsync each batch before replying), BATCH "
            + "(fsync every 50 ms), NEVER (default: ${DEFAULT-VALUE})")
    FsyncPolicy fsync = FsyncPolicy.BATCH;

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

    @Option(names = "--max-memory", paramLabel = "MIB", description = "tasks and results held above this make new "
            + "bundles wait (refused with BUSY, sent again by their clients); results awaiting acknowledgement over a "
            + "quarter of it go to disk (default: half the heap)")
    Long maxMemoryMiB;

    @Option(names = "--max-spill", paramLabel = "MIB", description = "most disk for results awaiting "
            + "acknowledgement beyond their share of memory, in JOURNAL/spill or ~/.falkon/spill (default: "
            + "${DEFAULT-VALUE}; 0: none)")
    long maxSpillMiB = 16384;

    @Option(names = "--ws-port", description = "also serve the Web Services (SOAP) interface on this HTTP port "
            + "(0 picks a free one; default: off); WSDL at http://HOST:PORT/axis2/services/Falkon?wsdl")
    Integer wsPort;

    @Option(names = "--http-port", description = "serve the live dashboard (http://HOST:PORT/?token=TOKEN) and "
            + "Prometheus metrics (/metrics, with the token as a bearer token) on this port (0 picks a free one; "
            + "default: off); HTTPS with --tls-cert")
    Integer httpPort;

    @Option(names = "--ws-max-bundle", description = "most tasks one WS Submit may carry (default: ${DEFAULT-VALUE})")
    int wsMaxBundle = WsTransport.Settings.defaults().maxBundle();

    @Option(names = "--ws-max-request", paramLabel = "BYTES", description = "largest WS request body "
            + "(default: ${DEFAULT-VALUE})")
    int wsMaxRequest = WsTransport.Settings.defaults().maxRequestBytes();

    @Option(names = "--ws-max-connections", description = "WS connections open at once (default: ${DEFAULT-VALUE})")
    int wsMaxConnections = WsTransport.Settings.defaults().maxConnections();

    @Mixin
    StdinLifeline lifeline = new StdinLifeline();

    public static void main(String[] args) {
        System.exit(new CommandLine(new DispatcherCommand()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        Dispatcher d;
        String tokenFrom;
        try {
            if (noAuth && (token != null || tokenFile != null)) {
                throw new IllegalArgumentException("--no-auth and a token (--token, --token-file) contradict each other");
            }
            if ((tlsCert == null) != (tlsKey == null)) {
                throw new IllegalArgumentException("--tls-cert and --tls-key go together");
            }
            TokenSource.Found found = noAuth ? new TokenSource.Found(Token.none(), "--no-auth")
                    : TokenSource.system().forServer(token, tokenFile);
            tokenFrom = found.from();
            SchedulerConfig sc = SchedulerConfig.defaults()
                    .withDefaultRetries(retries).withDispatchTimeoutMillis(dispatchTimeoutSeconds * 1000)
                    .withSuspension(suspendAfter, suspendWindowSeconds * 1000, suspendForSeconds * 1000)
                    .withWindowSize(window).withMulticast(!noMulticast);
            if (maxSpillMiB < 0) {
                throw new IllegalArgumentException("--max-spill must not be negative");
            }
            if (maxMemoryMiB != null) {
                sc = sc.withMemoryBudgetBytes(maxMemoryMiB << 20);
            }
            if (shareFile != null) {
                try {
                    sc = sc.withShares(io.falkon.dispatcher.ShareFile.read(shareFile));
                } catch (java.io.IOException e) {
                    throw new IllegalArgumentException("--share-file: cannot read " + shareFile + ": " + e.getMessage());
                }
            }
            DispatcherConfig cfg = DispatcherConfig.defaults().withBindHost(host).withPort(port)
                    .withToken(found.token()).withIoThreads(ioThreads).withHeartbeatMillis(heartbeatMillis)
                    .withPolicy(DispatchPolicies.byName(policy, gccThreshold)).withScheduler(sc)
                    .withJournal(journal, fsync).withSpill(null, maxSpillMiB << 20).withMaxTaskBytes(maxTaskBytes).withAdvertiseHost(advertiseHost)
                    .withTls(tlsCert == null ? null : Tls.server(tlsCert, tlsKey))
                    .withWs(wsPort == null ? -1 : wsPort, WsTransport.Settings.defaults().withMaxBundle(wsMaxBundle)
                            .withMaxRequestBytes(wsMaxRequest).withMaxConnections(wsMaxConnections))
                    .withHttp(httpPort == null ? -1 : httpPort);
            d = Dispatcher.start(cfg);
        } catch (IllegalArgumentException | IllegalStateException e) {
            System.err.println("falkon dispatcher: " + e.getMessage());
            return 2;
        }
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (journal != null) {
                // a planned stop of a journaled dispatcher is a restart (an upgrade, a move): its
                // executors keep dialling and rejoin its successor, its clients re-attach
                d.stopForRestart();
                System.err.println("falkon dispatcher: stopped; its state is in " + journal + ": started again "
                        + "with --journal " + journal + " it carries on, and executors dialling it rejoin");
            } else {
                d.close(); // nothing would carry on: the executors are told to leave
            }
            stop.countDown();
        }, "falkon-shutdown"));
        d.failed().thenRun(stop::countDown);
        lifeline.startIfAsked("falkon dispatcher");
        System.out.println("falkon dispatcher listening on " + host + ":" + d.port()
                + (tlsCert == null ? "" : " (TLS)"));
        System.out.println(noAuth ? "falkon dispatcher: AUTHENTICATION IS OFF (--no-auth)"
                : "falkon dispatcher: callers must present the token from " + tokenFrom);
        if (d.wsUrl() != null) {
            System.out.println("falkon dispatcher WS interface at " + d.wsUrl() + " (WSDL: " + d.wsUrl() + "?wsdl)");
        }
        if (d.httpUrl() != null) {
            System.out.println("falkon dispatcher dashboard at " + d.httpUrl() + "?token=TOKEN (the token named above); metrics at "
                    + d.httpUrl() + "metrics");
        }
        System.out.flush();
        stop.await();
        if (d.failed().isDone()) {
            System.err.println("falkon dispatcher: stopped after an internal failure (see the log); restart it with "
                    + "its journal to carry on");
            return EXIT_FAILED;
        }
        return 0;
    }
}
