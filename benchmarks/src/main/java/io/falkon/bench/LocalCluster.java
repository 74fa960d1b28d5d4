package io.falkon.bench;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.executor.Executor;
import io.falkon.executor.ExecutorConfig;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One dispatcher plus N executors in this JVM, talking over real TCP sockets on 127.0.0.1: the
 * topology the benchmarks measure (executors "emulated in one JVM" in the papers' sense: each
 * has its own connection and I/O thread, only the process is shared).
 */
public final class LocalCluster implements AutoCloseable {
    private final Dispatcher dispatcher;
    private final List<Executor> executors = new ArrayList<>();

    public LocalCluster(DispatcherConfig config, int executorCount, int slots, boolean noExec) {
        this.dispatcher = Dispatcher.start(config);
        try {
            for (int i = 0; i < executorCount; i++) {
                executors.add(Executor.start(ExecutorConfig.of("127.0.0.1", dispatcher.port())
                        .withId("bench-" + i).withSlots(slots).withNoExec(noExec)));
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

    public FalkonClient client(ClientOptions options) {
        return FalkonClient.connect(address(), options);
    }

    @Override
    public void close() {
        executors.forEach(Executor::close);
        dispatcher.close();
    }
}
