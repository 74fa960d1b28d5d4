package io.falkon.bench;

import io.falkon.executor.Executor;
import io.falkon.executor.ExecutorConfig;
import io.falkon.protocol.auth.Token;
import io.falkon.provisioner.JobRequest;
import io.falkon.provisioner.lrm.LocalAdapter;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * BENCHMARK ONLY: a {@link LocalAdapter.Launcher} whose nodes are executors started inside this JVM,
 * so that a time-scaled provisioning run with 32 nodes fits on a 2-core machine (32 executor JVMs
 * would spend seconds of CPU just starting). Each executor runs real processes and keeps the job's
 * {@code --slots} and {@code --idle-exit} and presents the dispatcher's token; the rest of the
 * executor command is not used. Also
 * accounts executor-seconds (registered time), for the resource utilization.
 */
final class InProcessNodes implements LocalAdapter.Launcher {
    private final int dispatcherPort;
    private final Token token;
    private final AtomicLong registeredNanos = new AtomicLong();

    InProcessNodes(int dispatcherPort, Token token) {
        this.dispatcherPort = dispatcherPort;
        this.token = token;
    }

    private static String option(List<String> cmd, String name, String otherwise) {
        int i = cmd.indexOf(name);
        return i >= 0 && i + 1 < cmd.size() ? cmd.get(i + 1) : otherwise;
    }

    @Override
    public LocalAdapter.Node start(JobRequest r, String jobId, int index) {
        int slots = Integer.parseInt(option(r.executorCommand(), "--slots", "1"));
        Duration idle = Duration.ofMillis(Math.round(Double.parseDouble(option(r.executorCommand(), "--idle-exit", "0"))
                * 1000));
        long t0 = System.nanoTime();
        Executor e = Executor.start(ExecutorConfig.of("127.0.0.1", dispatcherPort).withId(r.name() + "-n" + index)
                .withSlots(slots).withIdleExit(idle).withToken(token));
        e.terminated().whenComplete((why, err) -> registeredNanos.addAndGet(System.nanoTime() - t0));
        return new LocalAdapter.Node() {
            @Override
            public boolean alive() {
                return !e.terminated().isDone();
            }

            @Override
            public void stop() {
                e.close();
            }
        };
    }

    /** Executor-seconds from start to exit of every executor that has exited. */
    double registeredSeconds() {
        return registeredNanos.get() / 1e9;
    }
}
