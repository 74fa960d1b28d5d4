package io.falkon.bench;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.executor.Executor;
import io.falkon.executor.ExecutorConfig;
import io.falkon.executor.LocalExecutors;
import io.falkon.protocol.auth.Token;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * One dispatcher in this JVM plus N executors talking to it over real TCP sockets on 127.0.0.1.
 * Executors are either emulated in this JVM (each with its own connection and I/O thread; the
 * papers' "many executors in one JVM", right for no-exec dispatch measurements) or real executor
 * processes (their own JVMs, as in production; right when tasks start real processes).
 */
public final class LocalCluster implements AutoCloseable {
    private final Dispatcher dispatcher;
    private final List<Executor> executors = new ArrayList<>();
    private LocalExecutors processes;
    /** Event loops shared by emulated no-exec executors, so that thousands need no thread each. */
    private EventLoopGroup sharedLoops;

    public LocalCluster(DispatcherConfig config, int executorCount, int slots, boolean noExec, boolean asProcesses) {
        this(config, executorCount, slots, noExec, asProcesses, 0);
    }

    public LocalCluster(DispatcherConfig config, int executorCount, int slots, boolean noExec, boolean asProcesses,
                        int prefetch) {
        this(config, executorCount, slots, noExec, asProcesses, prefetch, c -> c);
    }

    /** @param customize adjusts each in-JVM executor's configuration (caches, store, ...) */
    public LocalCluster(DispatcherConfig config, int executorCount, int slots, boolean noExec, boolean asProcesses,
                        int prefetch, UnaryOperator<ExecutorConfig> customize) {
        this(config, executorCount, slots, noExec, asProcesses ? LocalExecutors.Impl.JAVA : null, prefetch, customize);
    }

    /**
     * @param processes which executor implementation to run as processes, or null for executors
     *                  emulated in this JVM
     */
    public LocalCluster(DispatcherConfig config, int executorCount, int slots, boolean noExec,
                        LocalExecutors.Impl processes, int prefetch) {
        this(config, executorCount, slots, noExec, processes, prefetch, c -> c);
    }

    private LocalCluster(DispatcherConfig config, int executorCount, int slots, boolean noExec,
                         LocalExecutors.Impl impl, int prefetch, UnaryOperator<ExecutorConfig> customize) {
        this.dispatcher = Dispatcher.start(config);
        try {
            if (impl != null) {
                processes = LocalExecutors.start(impl, executorCount, slots, noExec, dispatcher.port(), dispatcher.token(),
                        "bench", List.of("--prefetch", Integer.toString(prefetch)));
            } else {
                if (noExec) {
                    sharedLoops = new MultiThreadIoEventLoopGroup(
                            Math.min(executorCount, Runtime.getRuntime().availableProcessors()),
                            new DefaultThreadFactory("bench-executor", true), NioIoHandler.newFactory());
                }
                for (int i = 0; i < executorCount; i++) {
                    ExecutorConfig c = customize.apply(ExecutorConfig.of("127.0.0.1", dispatcher.port())
                            .withId("bench-" + i).withSlots(slots).withNoExec(noExec).withPrefetch(prefetch)
                            .withToken(dispatcher.token()));
                    executors.add(sharedLoops != null ? Executor.start(c, sharedLoops.next()) : Executor.start(c));
                }
            }
            dispatcher.awaitExecutors(executorCount, Duration.ofMinutes(2));
        } catch (Exception e) {
            close();
            throw new IllegalStateException("cannot start the local cluster: " + e.getMessage(), e);
        }
    }

    public Dispatcher dispatcher() {
        return dispatcher;
    }

    public String address() {
        return "127.0.0.1:" + dispatcher.port();
    }

    /** What clients and executors of this cluster present. */
    public Token token() {
        return dispatcher.token();
    }

    /** A client of this cluster's dispatcher (its token added to {@code options}). */
    public FalkonClient client(ClientOptions options) {
        return FalkonClient.connect(address(), options.withToken(token()));
    }

    @Override
    public void close() {
        executors.forEach(Executor::close);
        if (sharedLoops != null) {
            sharedLoops.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        }
        if (processes != null) {
            processes.leaving(); // they exit once the dispatcher has closed their connections
        }
        dispatcher.close();
        if (processes != null) {
            processes.close();
        }
    }
}
