package io.falkon.dispatcher;

import io.falkon.dispatcher.core.Scheduler;
import io.falkon.dispatcher.core.SchedulerLoop;
import io.falkon.dispatcher.transport.TcpTransport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A running Falkon dispatcher: the scheduler thread plus its TCP endpoint.
 *
 * <pre>{@code
 * try (Dispatcher d = Dispatcher.start(DispatcherConfig.local())) {
 *     int port = d.port();   // executors and clients connect here
 * }
 * }</pre>
 */
public final class Dispatcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Dispatcher.class);

    private final DispatcherConfig config;
    private final SchedulerLoop loop;
    private final TcpTransport tcp;
    private volatile boolean closed;

    private Dispatcher(DispatcherConfig config, SchedulerLoop loop, TcpTransport tcp) {
        this.config = config;
        this.loop = loop;
        this.tcp = tcp;
    }

    /** Starts the scheduler and binds the port; fails if the port cannot be bound. */
    public static Dispatcher start(DispatcherConfig config) {
        String id = "d-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
        Scheduler scheduler = new Scheduler(config.policy(), config.clock(), id);
        SchedulerLoop loop = new SchedulerLoop(scheduler).start();
        long hb = config.heartbeatMillis();
        TcpTransport.Settings settings = new TcpTransport.Settings(config.token(), config.maxFrameLength(), hb,
                hb > 0 ? 3 * hb : 0, 10_000);
        try {
            TcpTransport tcp = TcpTransport.bind(new InetSocketAddress(config.bindHost(), config.port()),
                    config.ioThreads(), settings, loop);
            Dispatcher d = new Dispatcher(config, loop, tcp);
            log.info("dispatcher {} listening on {} (policy {})", id, tcp.localAddress(), config.policy().name());
            return d;
        } catch (InterruptedException e) {
            loop.close();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while binding", e);
        } catch (RuntimeException e) {
            loop.close();
            throw new IllegalStateException("cannot listen on " + config.bindHost() + ":" + config.port() + ": "
                    + e.getMessage(), e);
        }
    }

    public DispatcherConfig config() {
        return config;
    }

    /** The TCP port it listens on (the real one when configured with port 0). */
    public int port() {
        return tcp.localAddress().getPort();
    }

    public InetSocketAddress address() {
        return tcp.localAddress();
    }

    /** The dispatcher-wide status document (see docs/protocol.md section 7). */
    public String status() {
        return onLoop(loop.scheduler()::statusJson);
    }

    /** Completes when at least {@code count} executors have registered. */
    public CompletableFuture<Void> whenExecutors(int count) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        loop.execute(() -> loop.scheduler().whenExecutors(count, f));
        return f;
    }

    /** Waits up to {@code timeout} for {@code count} executors to register. */
    public void awaitExecutors(int count, Duration timeout) throws TimeoutException, InterruptedException {
        try {
            whenExecutors(count).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    private <T> T onLoop(java.util.function.Supplier<T> query) {
        CompletableFuture<T> f = new CompletableFuture<>();
        loop.execute(() -> f.complete(query.get()));
        try {
            return f.get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("scheduler did not answer", e);
        }
    }

    /**
     * Stops: refuses new work, closes every connection (executors see the dispatcher go away and
     * exit or reconnect; clients' outstanding tasks fail), and stops the scheduler thread.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        loop.execute(() -> loop.scheduler().shutDown());
        tcp.close();
        loop.close();
        log.info("dispatcher {} stopped", loop.scheduler().dispatcherId());
    }
}
