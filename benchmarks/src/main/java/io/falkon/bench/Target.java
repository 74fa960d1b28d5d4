package io.falkon.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.executor.ConnectOptions;

import java.io.IOException;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * Where a client-side benchmark sends its tasks: a {@link LocalCluster} it starts itself (the
 * default), or a dispatcher already running elsewhere with its executors attached
 * ({@code --dispatcher HOST:PORT}), which is how these benchmarks run on a real cluster.
 */
final class Target implements AutoCloseable {
    private final LocalCluster cluster;
    private final String tcp;
    private final String ws;
    private final ConnectOptions connect;

    private Target(LocalCluster cluster, String tcp, String ws, ConnectOptions connect) {
        this.cluster = cluster;
        this.tcp = tcp;
        this.ws = ws;
        this.connect = connect;
    }

    /**
     * The running dispatcher at {@code dispatcher} if given (reached with the token and TLS
     * {@code connect} names), else the cluster {@code local} starts.
     */
    static Target of(String dispatcher, String wsUrl, ConnectOptions connect, Supplier<LocalCluster> local) {
        if (dispatcher != null) {
            return new Target(null, dispatcher, wsUrl, connect);
        }
        LocalCluster c = local.get();
        return new Target(c, c.address(), c.dispatcher().wsUrl(), null); // ws null without a WS interface
    }

    /** {@code options} with the token and TLS a running dispatcher is reached with. */
    static ClientOptions remote(ConnectOptions connect, ClientOptions options) {
        return options.withToken(connect.token().token()).withTls(connect.tls());
    }

    boolean isLocal() {
        return cluster != null;
    }

    String tcp() {
        return tcp;
    }

    /**
     * A client of the target over TCP: a local cluster's token is added; a running dispatcher's is
     * found as {@code --token-file}/{@code --token} say, else the way every Falkon client finds it
     * ($FALKON_TOKEN, ~/.falkon/token).
     */
    FalkonClient connect(ClientOptions options) {
        return cluster != null ? cluster.client(options) : FalkonClient.connect(tcp, remote(connect, options));
    }

    /** The same over the Web Services interface. */
    FalkonClient connectWs(ClientOptions options) {
        return FalkonClient.connect(ws(), cluster != null ? options.withToken(cluster.token())
                : remote(connect, options));
    }

    /** @throws IllegalArgumentException if a running dispatcher was given without its WS address */
    String ws() {
        if (ws == null) {
            throw new IllegalArgumentException("no Web Services address: give --ws URL with --dispatcher");
        }
        return ws;
    }

    String describe() {
        return isLocal() ? "this JVM" : tcp;
    }

    /** Registered executors and their slots, from the dispatcher's status document. */
    static int[] executors(FalkonClient client) {
        try {
            JsonNode s = new ObjectMapper().readTree(client.status()).path("executors");
            return new int[]{s.path("registered").asInt(), s.path("slots").asInt()};
        } catch (IOException e) {
            throw new IllegalStateException("unreadable status document: " + e.getMessage(), e);
        }
    }

    /**
     * Waits until at least {@code count} executors are registered with a running dispatcher
     * (polling its status: there is no event for it over the client protocol).
     */
    static void awaitExecutors(FalkonClient client, int count, Duration timeout)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        int[] now;
        while ((now = executors(client))[0] < count) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("only " + now[0] + " of " + count + " executors registered after "
                        + timeout.toSeconds() + " s");
            }
            Thread.sleep(200);
        }
    }

    @Override
    public void close() {
        if (cluster != null) {
            cluster.close();
        }
    }
}
