package io.falkon.bench;

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

    private Target(LocalCluster cluster, String tcp, String ws) {
        this.cluster = cluster;
        this.tcp = tcp;
        this.ws = ws;
    }

    /** The running dispatcher at {@code dispatcher} if given, else the cluster {@code local} starts. */
    static Target of(String dispatcher, String wsUrl, Supplier<LocalCluster> local) {
        if (dispatcher != null) {
            return new Target(null, dispatcher, wsUrl);
        }
        LocalCluster c = local.get();
        return new Target(c, c.address(), c.dispatcher().wsUrl()); // null without a WS interface
    }

    boolean isLocal() {
        return cluster != null;
    }

    String tcp() {
        return tcp;
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
    static int[] executors(io.falkon.client.FalkonClient client) {
        try {
            com.fasterxml.jackson.databind.JsonNode s = new com.fasterxml.jackson.databind.ObjectMapper()
                    .readTree(client.status()).path("executors");
            return new int[]{s.path("registered").asInt(), s.path("slots").asInt()};
        } catch (java.io.IOException e) {
            throw new IllegalStateException("unreadable status document: " + e.getMessage(), e);
        }
    }

    /**
     * Waits until at least {@code count} executors are registered with a running dispatcher
     * (polling its status: there is no event for it over the client protocol).
     */
    static void awaitExecutors(io.falkon.client.FalkonClient client, int count, java.time.Duration timeout)
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
