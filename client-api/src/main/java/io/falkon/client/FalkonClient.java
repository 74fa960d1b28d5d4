package io.falkon.client;

import io.falkon.protocol.Message;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Entry point of the client library: a connection to one dispatcher, on which instances are
 * created.
 *
 * <pre>{@code
 * try (FalkonClient client = FalkonClient.connect("head-node:50500");
 *      Instance instance = client.createInstance("sweep")) {
 *     List<CompletableFuture<TaskResult>> results =
 *             instance.submit(List.of(TaskSpec.shell("echo hi"), TaskSpec.of("/bin/hostname")));
 *     instance.awaitAll();
 *     for (CompletableFuture<TaskResult> r : results) {
 *         System.out.println(r.join().stdout());
 *     }
 * }
 * }</pre>
 *
 * Thread-safe; one client can serve many threads and many instances.
 */
public final class FalkonClient implements AutoCloseable {
    private final Connection connection;
    private final ClientOptions options;
    private final List<Instance> instances = new CopyOnWriteArrayList<>();

    private FalkonClient(Connection connection, ClientOptions options) {
        this.connection = connection;
        this.options = options;
    }

    /**
     * Connects with default options to {@code host:port} (or {@code tcp://host:port}, or just
     * {@code host}), or to the Web Services interface at an {@code http://} URL.
     */
    public static FalkonClient connect(String address) {
        return connect(address, ClientOptions.defaults());
    }

    /**
     * Connects to a dispatcher: over TCP for {@code host:port}, over its Web Services interface for
     * an {@code http://…/axis2/services/Falkon} URL (docs/ws.md). Instances behave the same on both;
     * over WS the lease ({@link ClientOptions#leaseSeconds()}, 0 for the service's default) is the idle
     * time after which the dispatcher destroys an instance nobody calls, and {@link #attach} is not
     * available.
     *
     * @throws IllegalArgumentException if the address cannot be parsed
     * @throws FalkonException          if the dispatcher cannot be reached or refuses the handshake
     */
    public static FalkonClient connect(String address, ClientOptions options) {
        for (ConnectionFactory f : Transports.ALL) {
            if (f.accepts(address)) {
                return new FalkonClient(f.connect(address, options), options);
            }
        }
        throw new IllegalArgumentException("no transport on the class path takes '" + address + "' (host:port needs "
                + "falkon-transport-tcp, http(s):// falkon-transport-ws)");
    }

    /** The transports on the class path, found once, when a client first connects. */
    private static final class Transports {
        static final List<ConnectionFactory> ALL = java.util.ServiceLoader.load(ConnectionFactory.class,
                FalkonClient.class.getClassLoader()).stream().map(java.util.ServiceLoader.Provider::get).toList();
    }

    /**
     * A client over a connection made elsewhere: the in-process one of {@code falkon run} ({@code InProcessTransport})
     * to a dispatcher in this process. The options' token, TLS and timeouts do not apply to it.
     */
    public static FalkonClient over(Connection connection, ClientOptions options) {
        return new FalkonClient(Objects.requireNonNull(connection, "connection"), options);
    }

    public ClientOptions options() {
        return options;
    }

    /** Creates an instance named after {@link ClientOptions#clientName()}. */
    public Instance createInstance() {
        return createInstance(options.clientName());
    }

    /** Creates a new, isolated instance on the dispatcher. */
    public Instance createInstance(String name) {
        Message.InstanceCreated made = Instance.await(connection.createInstance(name, options.leaseSeconds()),
                "create instance");
        Instance[] self = new Instance[1];
        Instance in = new Instance(connection, made.instanceId(), made.secret(), options,
                () -> instances.remove(self[0]));
        self[0] = in;
        instances.add(in);
        return in;
    }

    /**
     * Takes over an existing instance by its key ({@link Instance#key()}: the id and the instance's
     * secret), typically one whose client went away (its lease keeps it alive): its results that no
     * client acknowledged, and all that finish later, go to {@code onResult}; new tasks can be
     * submitted to it as usual.
     *
     * @throws IllegalArgumentException if {@code key} is not an instance key
     * @throws FalkonException          if there is no such instance (destroyed, lease run out, created
     *                                  without a lease, the dispatcher restarted without a journal, or
     *                                  the secret is wrong)
     */
    public Instance attach(String key, Consumer<TaskResult> onResult) {
        return attach(key, onResult, true);
    }

    /**
     * Like {@link #attach(String, Consumer)}, but the results are not acknowledged: the dispatcher
     * keeps them for whoever takes the instance over next (to look at an instance's results without
     * taking them away, as {@code falkon results} does). They are kept within the instance's lease.
     */
    public Instance attachKeepingResults(String key, Consumer<TaskResult> onResult) {
        return attach(key, onResult, false);
    }

    private Instance attach(String key, Consumer<TaskResult> onResult, boolean acknowledge) {
        Objects.requireNonNull(onResult, "onResult");
        InstanceKey.Parts parts = InstanceKey.parse(key);
        CompletableFuture<Instance> made = new CompletableFuture<>();
        // on the I/O thread, so that the instance exists before the redelivered results behind the reply
        connection.executor().execute(() -> connection.attach(parts.id(), parts.secret()).whenComplete((reply, err) -> {
            if (err != null) {
                made.completeExceptionally(err);
                return;
            }
            Instance[] self = new Instance[1];
            Instance in = new Instance(connection, parts.id(), parts.secret(), options,
                    () -> instances.remove(self[0]), onResult, reply.highestClientTaskId(), reply.redelivered());
            if (!acknowledge) {
                in.keepingResults(); // before the redelivered results behind the reply, on this same thread
            }
            self[0] = in;
            instances.add(in);
            made.complete(in);
        }));
        return Instance.await(made, "attach");
    }

    /** The dispatcher-wide status document (JSON; see docs/protocol.md section 7). */
    public String status() {
        return Instance.await(connection.status(0), "status");
    }

    /**
     * The status document, without waiting: while the connection is down the request waits for it
     * (or fails when the connection gives up). Failover watches dispatchers with it.
     */
    CompletableFuture<String> statusAsync() {
        return connection.status(0);
    }

    /** Closes every open instance (cancelling unfinished tasks), then the connection. */
    @Override
    public void close() {
        try {
            for (Instance in : instances) {
                try {
                    in.close();
                } catch (FalkonException e) {
                    // the connection is going away anyway
                }
            }
        } finally {
            connection.close();
        }
    }
}
