package io.falkon.e2e.client;

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
 * Test fixture: one dispatcher and N executors that run real processes, all over real TCP
 * sockets on 127.0.0.1 (the JPPF-style topology fixture).
 */
final class Topology implements AutoCloseable {
    final Dispatcher dispatcher;
    final List<Executor> executors = new ArrayList<>();

    Topology(int executorCount, int slots) throws Exception {
        this(DispatcherConfig.local(), executorCount, slots);
    }

    Topology(DispatcherConfig config, int executorCount, int slots) throws Exception {
        dispatcher = Dispatcher.start(config);
        for (int i = 0; i < executorCount; i++) {
            addExecutor("exec-" + i, slots, false);
        }
        dispatcher.awaitExecutors(executorCount, Duration.ofSeconds(30));
    }

    Executor addExecutor(String id, int slots, boolean noExec) {
        Executor e = Executor.start(ExecutorConfig.of("127.0.0.1", dispatcher.port()).withId(id).withSlots(slots)
                .withNoExec(noExec).withOutputCap(64 * 1024).withToken(dispatcher.token()));
        executors.add(e);
        return e;
    }

    String address() {
        return "127.0.0.1:" + dispatcher.port();
    }

    FalkonClient client() {
        return FalkonClient.connect(address(), ClientOptions.defaults().withToken(dispatcher.token()));
    }

    /** A client with these options, presenting the dispatcher's token unless they name one. */
    FalkonClient client(ClientOptions options) {
        return FalkonClient.connect(address(), !options.token().required() ? options.withToken(dispatcher.token())
                : options);
    }

    @Override
    public void close() {
        executors.forEach(Executor::close);
        dispatcher.close();
    }
}
