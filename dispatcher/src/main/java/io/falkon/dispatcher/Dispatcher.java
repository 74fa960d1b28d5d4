package io.falkon.dispatcher;

import io.falkon.dispatcher.admission.Admission;
import io.falkon.dispatcher.admission.ServerTransport;
import io.falkon.dispatcher.core.Journal;
import io.falkon.dispatcher.core.ResultSpill;
import io.falkon.dispatcher.core.Scheduler;
import io.falkon.dispatcher.core.SchedulerLoop;
import io.falkon.dispatcher.core.StatusSnapshot;
import io.falkon.dispatcher.journal.FileJournal;
import io.falkon.dispatcher.journal.SpillFiles;
import io.falkon.transport.monitor.MonitorTransport;
import io.falkon.dispatcher.status.StatusReporter;
import io.falkon.transport.tcp.TcpTransport;
import io.falkon.transport.ws.WsTransport;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.auth.TokenSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A running Falkon dispatcher, and the composition root of its parts: the journal (replayed), the
 * scheduler thread with the admission stage in front of it, and the transports (TCP unless the port
 * is -1; WS and the monitor when configured; any other a caller {@linkplain #add adds}, such as
 * {@code falkon run}'s in-process one and its C executors' pipes), started in that order and
 * closed in the reverse one.
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
    /** Every transport, in the order they started (TCP first); guarded by {@code this} with {@link #closed}. */
    private final List<ServerTransport> transports;
    /** Null when the configured port is -1 (a {@code falkon run} whose executors come over pipes). */
    private final TcpTransport tcp;
    private final Admission admission;
    private final FileJournal journal;
    private final WsTransport ws;
    private final MonitorTransport monitor;
    private final SpillFiles spill;
    private final StatusReporter reporter;
    private final ScheduledExecutorService sampler;
    private volatile boolean closed;

    private Dispatcher(DispatcherConfig config, SchedulerLoop loop, Admission admission,
                       List<ServerTransport> transports, TcpTransport tcp, FileJournal journal, WsTransport ws,
                       MonitorTransport monitor, SpillFiles spill, StatusReporter reporter) {
        this.config = config;
        this.reporter = reporter;
        this.transports = new CopyOnWriteArrayList<>(transports);
        this.admission = admission;
        this.spill = spill;
        this.loop = loop;
        this.tcp = tcp;
        this.journal = journal;
        this.ws = ws;
        this.monitor = monitor;
        // JVM readings and other components' sections are sampled here, never on the scheduler thread
        this.sampler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "falkon-status");
            t.setDaemon(true);
            return t;
        });
        // the first sample a second in: a short run (falkon run on a few lines) is over by then, and
        // sampling sets up JMX, which would take a core from its start
        sampler.scheduleWithFixedDelay(monitor == null ? reporter::refresh : this::sampleForMonitor, 1, 1,
                TimeUnit.SECONDS);
        // a scheduler that failed stops the dispatcher without releasing the executors: whoever restarts
        // it (a supervisor, with the journal) gets them back
        loop.failed().thenRun(() -> new Thread(this::stopForRestart, "falkon-failed").start());
    }

    /**
     * Opens the journal (replaying it) if one is configured, starts the scheduler and binds the port.
     *
     * @throws IllegalStateException if the journal cannot be opened or the port cannot be bound
     */
    public static Dispatcher start(DispatcherConfig config) {
        String id = "d-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
        FileJournal journal = null;
        if (config.journalDir() != null) {
            try {
                journal = FileJournal.open(config.journalDir(), config.fsync());
            } catch (IOException e) {
                throw new IllegalStateException("cannot open the journal: " + e.getMessage(), e);
            }
        }
        SpillFiles spill = openSpill(config, id);
        StatusReporter reporter = new StatusReporter();
        Scheduler scheduler = new Scheduler(config.policy(), config.clock(), id, config.scheduler(),
                journal == null ? Journal.NONE : journal, spill == null ? ResultSpill.NONE : spill, reporter);
        if (journal != null) {
            journal.restoreInto(scheduler.recovery());
        }
        SchedulerLoop loop = new SchedulerLoop(scheduler).start();
        Admission admission = new Admission(loop, config.token(), config.maxTaskBytes());
        List<ServerTransport> started = new ArrayList<>();
        TcpTransport tcp;
        WsTransport ws = null;
        MonitorTransport monitor = null;
        try {
            tcp = config.port() < 0 ? null : started(started, bindTcp(config, id, admission));
            if (config.wsPort() >= 0) {
                ws = started(started, WsTransport.bind(new InetSocketAddress(config.bindHost(), config.wsPort()),
                        admission, config.ws(), config.tls(), config.advertiseHost()));
            }
            if (config.httpPort() >= 0) {
                monitor = started(started, MonitorTransport.bind(new InetSocketAddress(config.bindHost(),
                        config.httpPort()), admission, config.http(), config.tls(), config.advertiseHost()));
            }
        } catch (RuntimeException e) {
            closeInReverse(started);
            loop.close();
            closeStores(journal, spill);
            throw e;
        }
        if (!config.token().required() && (tcp != null || ws != null)) {
            log.warn("AUTHENTICATION IS OFF: anyone who can reach {}{}{} can run commands as this user",
                    config.bindHost(), tcp == null ? "" : ":" + tcp.port(), ws == null ? "" : " or the WS port " + ws.port());
        }
        if (tcp != null) {
            log.info("dispatcher {} listening on {} (policy {})", id, tcp.localAddress(), config.policy().name());
        } else {
            log.info("dispatcher {} started without a TCP listener (policy {})", id, config.policy().name());
        }
        return new Dispatcher(config, loop, admission, started, tcp, journal, ws, monitor, spill, reporter);
    }

    private static <T extends ServerTransport> T started(List<ServerTransport> started, T transport) {
        started.add(transport);
        return transport;
    }

    /** Closes transports in the reverse order of their start: the TCP listener, first started, goes last. */
    private static void closeInReverse(List<ServerTransport> transports) {
        for (int i = transports.size() - 1; i >= 0; i--) {
            transports.get(i).close();
        }
    }

    private static TcpTransport bindTcp(DispatcherConfig config, String id, Admission admission) {
        long hb = config.heartbeatMillis();
        TcpTransport.Settings settings = new TcpTransport.Settings(id, config.maxFrameLength(), hb,
                hb > 0 ? 3 * hb : 0, 10_000, config.tls());
        try {
            return TcpTransport.bind(new InetSocketAddress(config.bindHost(), config.port()), config.ioThreads(),
                    settings, admission);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while binding", e);
        } catch (RuntimeException e) {
            throw new IllegalStateException("cannot listen on " + config.bindHost() + ":" + config.port() + ": "
                    + e.getMessage(), e);
        }
    }

    /**
     * Plugs in one more transport, made by {@code make} in front of this dispatcher's admission stage
     * (the in-process one of {@code falkon run}, which this module does not depend on); it is closed
     * with the others, before them, and at once if the dispatcher has already stopped.
     */
    public <T extends ServerTransport> T add(Function<Admission, T> make) {
        T transport = make.apply(admission);
        boolean stopped;
        synchronized (this) {
            stopped = closed;
            if (!stopped) {
                transports.add(transport);
            }
        }
        if (stopped) {
            transport.close();
        }
        return transport;
    }

    /** The result spill, or null (none configured, or its directory cannot be made: results then stay in memory). */
    private static SpillFiles openSpill(DispatcherConfig config, String id) {
        if (config.maxSpillBytes() == 0) {
            return null;
        }
        Path dir = config.spillDir() != null ? config.spillDir()
                : config.journalDir() != null ? config.journalDir().resolve("spill")
                : TokenSource.system().home().resolve("spill").resolve(id);
        try {
            return SpillFiles.open(dir, config.maxSpillBytes());
        } catch (IOException | RuntimeException e) {
            log.warn("no result spill ({}: {}): results awaiting acknowledgement stay in memory, under the memory "
                    + "budget", dir, e.toString());
            return null;
        }
    }

    /** Requests refused as bad so far on every transport (logged, rate-limited: docs/security.md). */
    public long badRequests() {
        return admission.badRequests().total();
    }

    public DispatcherConfig config() {
        return config;
    }

    /** This dispatcher's id ({@code d-} and eight hex digits, new at every start), as told to peers in WELCOME. */
    public String id() {
        return loop.scheduler().dispatcherId();
    }

    /** What clients and executors must present ({@link Token#none()} when authentication is off). */
    public Token token() {
        return config.token();
    }

    /** The TCP port it listens on (the real one when configured with port 0); -1 with no TCP listener. */
    public int port() {
        return tcp == null ? -1 : tcp.localAddress().getPort();
    }

    /** The TCP listener's address, or null with none. */
    public InetSocketAddress address() {
        return tcp == null ? null : tcp.localAddress();
    }

    /** The scheduler's loop, for tests in this package (e.g. to hold the scheduler thread busy). */
    SchedulerLoop loop() {
        return loop;
    }

    /** The Web Services interface's address ({@code http://host:port/axis2/services/Falkon}), or null when off. */
    public String wsUrl() {
        return ws == null ? null : ws.url();
    }

    /**
     * The dispatcher-wide status document (see docs/protocol.md section 7): a snapshot taken on the
     * scheduler thread, rendered on this one with fresh JVM readings and sections.
     */
    public String status() {
        StatusSnapshot snapshot = onLoop(loop.scheduler()::snapshot);
        reporter.refresh();
        return reporter.dispatcher(snapshot);
    }

    /** The dashboard's address ({@code --http-port}), or null when it is off. */
    public String httpUrl() {
        return monitor == null ? null : monitor.url();
    }

    /** The monitoring port, or -1 when it is off. */
    public int httpPort() {
        return monitor == null ? -1 : monitor.port();
    }

    /** Once a second on the sampler thread: a snapshot from the scheduler thread, rendered here, to the monitor. */
    private void sampleForMonitor() {
        try {
            StatusSnapshot snapshot = onLoop(loop.scheduler()::snapshot);
            reporter.refresh();
            monitor.update(snapshot, reporter.dispatcher(snapshot));
        } catch (RuntimeException e) {
            log.debug("no status sample this second: {}", e.toString()); // stopping, or the loop is gone
        }
    }

    /**
     * Adds a section {@code name} to the status document, JSON from {@code json} (read off the
     * scheduler thread, about once a second and for every {@link #status()}).
     */
    public void statusSection(String name, Supplier<String> json) {
        reporter.section(name, json);
    }

    /** Completes with the cause if the scheduler failed and the dispatcher stopped because of it. */
    public CompletableFuture<Throwable> failed() {
        return loop.failed();
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

    private <T> T onLoop(Supplier<T> query) {
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

    private static void closeStores(FileJournal journal, SpillFiles spill) {
        if (journal != null) {
            journal.close();
        }
        if (spill != null) {
            spill.close();
        }
    }

    /**
     * Stops for good: refuses new work and freezes the state, tells the executors to leave, closes
     * every connection, stops the scheduler thread and closes the journal.
     */
    @Override
    public void close() {
        stop(true);
    }

    /**
     * Stops for a restart: like {@link #close()}, but the executors are not told to leave, so they
     * keep dialling and register with the dispatcher started next on the same port; with a journal
     * its clients re-attach and carry on.
     */
    public void stopForRestart() {
        stop(false);
    }

    private void stop(boolean releaseExecutors) {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        if (!loop.failed().isDone()) { // a failed loop runs nothing more: its state stays as it was
            CompletableFuture<Void> frozen = new CompletableFuture<>();
            loop.execute(() -> {
                loop.scheduler().shutDown(releaseExecutors);
                frozen.complete(null);
            });
            try {
                frozen.get(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException e) {
                log.warn("the scheduler did not acknowledge the shutdown: {}", e.toString());
            }
        }
        sampler.shutdownNow();
        // TCP last: its event loops write what is pending (the executors' SHUTTING_DOWN) before they stop
        closeInReverse(transports);
        loop.close();
        closeStores(journal, spill);
        log.info("dispatcher {} stopped", loop.scheduler().dispatcherId());
    }
}
