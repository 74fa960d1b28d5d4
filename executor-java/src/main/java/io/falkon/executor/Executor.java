package io.falkon.executor;

import io.falkon.datacache.CacheStore;
import io.falkon.datacache.OutputArchive;
import io.falkon.datacache.OutputStore;
import io.falkon.datacache.eviction.EvictionPolicies;
import io.falkon.datacache.fetch.StoreFetcher;
import io.falkon.datacache.peer.PeerServer;
import io.falkon.executor.run.Job;
import io.falkon.executor.run.SlotPool;
import io.falkon.executor.run.Staging;
import io.falkon.protocol.DataCodec;
import io.falkon.protocol.Execution;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.ExtTags;
import io.falkon.protocol.LogSafe;
import io.falkon.protocol.Message;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskSpecCodec;
import io.falkon.protocol.TaskStatus;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.session.Backoff;
import io.falkon.protocol.session.PeerSession;
import io.falkon.protocol.time.Clock;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * The Java executor: dials the dispatcher ({@link PeerSession}: handshake, the heartbeat the
 * dispatcher announces, reconnection), registers its slots, runs the tasks it is sent as OS
 * processes ({@link SlotPool}), and returns each result with its credit ({@link ResultBatcher}).
 * With a data cache, it serves its objects to peers and reports them to the dispatcher
 * ({@link CacheReporter}).
 *
 * <p>When the connection drops the executor kills what it was running (the dispatcher runs those
 * tasks again elsewhere) and dials again for up to {@link ExecutorConfig#reconnectFor()}, then
 * registers afresh. A dispatcher that shuts down on purpose says so, and the executor exits.
 *
 * <p>In no-exec mode (benchmarking only) it completes every task at once without starting a
 * process, and says so in each result's flags.
 */
public final class Executor implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Executor.class);
    private static final AtomicInteger SEQUENCE = new AtomicInteger();
    static final String LAUNCH_MECHANISM = "jdk.lang.Process.launchMechanism";
    /** How often the executor sends its full cache contents (besides the incremental reports). */
    static final long CACHE_SUMMARY_SECONDS = 60;

    static {
        preferFastSpawn();
    }

    /**
     * On JDK 17-21 under Linux, starts processes with vfork instead of the default posix_spawn of
     * the jspawnhelper trampoline: one exec per task instead of two, about twice the spawn rate
     * (see docs/benchmarks.md). Later JDKs deprecate VFORK, so there the default stays. An explicit
     * {@code -Djdk.lang.Process.launchMechanism} always wins. Must run before the first process
     * starts in this JVM; {@link #start} and the falkon command call it early.
     */
    public static void preferFastSpawn() {
        if (System.getProperty(LAUNCH_MECHANISM) == null && Runtime.version().feature() < 22
                && System.getProperty("os.name", "").startsWith("Linux")) {
            System.setProperty(LAUNCH_MECHANISM, "VFORK");
        }
    }

    private final ExecutorConfig config;
    private final EventLoopGroup group;
    private final EventLoop loop;
    /** False when the loop is shared with other executors in this JVM (emulation): close leaves it running. */
    private final boolean ownsGroup;
    private final Path spoolDir;
    private final SlotPool slots;
    /** The data cache and the server that shares it with peers; null without a cache. */
    private final CacheStore cache;
    private final PeerServer peerServer;
    /** This executor's output archive in the store (null when outputs have nowhere to go). */
    private final OutputArchive archive;
    /** Fetches what a multicast sends this way (null without a cache). */
    private final Replicator replicator;
    private final CacheReporter cacheReports;
    private final PeerSession session;
    private final Prefetch prefetch;
    private final ResultBatcher results;
    private final NoExec noExec;
    private final CompletableFuture<String> terminated = new CompletableFuture<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile boolean closing;
    /** Monotonic tick (config's clock) of the last work held: --idle-exit counts from it. */
    private volatile long lastWorkMicros;
    private int reconnects;

    private Executor(ExecutorConfig config, EventLoopGroup group, EventLoop loop, boolean ownsGroup, Path spoolDir)
            throws IOException, InterruptedException {
        this.config = config;
        this.group = group;
        this.loop = loop;
        this.ownsGroup = ownsGroup;
        this.spoolDir = spoolDir;
        this.session = new PeerSession(new PeerSession.Config(config.dispatcherHost(), config.dispatcherPort(),
                Protocol.ROLE_EXECUTOR, config.token(), "falkon-java-executor/" + Protocol.VERSION, config.tls(),
                config.connectTimeout(), config.reconnectFor(), Backoff.DEFAULT, config.reconnectFor()), loop,
                new Events(), config.clock());
        this.lastWorkMicros = config.clock().tickMicros();
        this.cacheReports = new CacheReporter(loop, session::channel);
        // no-exec executors fetch nothing; an HTTP client costs a selector thread each
        HttpClient http = config.noExec() ? null
                : HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        StoreFetcher store = config.noExec() ? null : new StoreFetcher(config.storeRoot(), http, config.storeBandwidth());
        Token token = config.token();
        if (config.cacheCapacity() > 0 && !config.noExec()) {
            Path dir = config.cacheDir() != null ? config.cacheDir() : spoolDir.resolve("cache");
            this.cache = new CacheStore(dir, config.cacheCapacity(), EvictionPolicies.byName(config.eviction()), store,
                    http, token, config.revalidate(), cacheReports);
            cacheReports.attach(cache);
            // peers on other nodes reach it; they present the deployment's token like everyone else
            this.peerServer = PeerServer.start(cache, "0.0.0.0", config.cachePort(), token);
            this.replicator = new Replicator(cache);
        } else {
            this.cache = null;
            this.peerServer = null;
            this.replicator = null;
        }
        this.prefetch = new Prefetch(config.prefetch(), config.slots(), config.cacheCapacity() > 0);
        this.noExec = new NoExec(loop, session::channel, config.noExecSleep());
        this.results = new ResultBatcher(loop, session::channel, session::generation, prefetch,
                this::waitingJobs, config.clock(), cacheReports::sendPending);
        OutputStore outputStore = config.outputRoot() == null ? null : new OutputStore(config.outputRoot());
        this.archive = outputStore == null || config.noExec() ? null
                : new OutputArchive(outputStore.root(), config.executorId(), OutputArchive.DEFAULT_THRESHOLD);
        this.slots = config.noExec() ? null : new SlotPool(config.slots(), config.runner(), spoolDir,
                config.outputCap(), config.spoolLimit(), config.workDir(), config.workerLimits(),
                new Staging(cache, store, outputStore, archive, spoolDir.resolve("sandboxes")),
                offers(config.resources()), (job, r) -> results.add(job.generation(), job.cores(), r));
    }

    /** Jobs received and not started yet. */
    private int waitingJobs() {
        return slots == null ? 0 : slots.queued();
    }

    /** {@code host-pid-n}: unique per process and per executor within it. */
    public static String defaultId() {
        return hostName() + "-" + ProcessHandle.current().pid() + "-" + SEQUENCE.incrementAndGet();
    }

    static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "localhost";
        }
    }

    /**
     * Connects, registers and starts taking tasks.
     *
     * @throws IllegalStateException if the dispatcher cannot be reached or refuses the executor
     */
    public static Executor start(ExecutorConfig config) {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("falkon-executor", true),
                NioIoHandler.newFactory());
        return start(config, group, group.next(), true);
    }

    /**
     * Like {@link #start(ExecutorConfig)}, but on an event loop the caller owns and may share
     * among many executors in one JVM: how benchmarks emulate thousands of executors (the paper
     * ran 900 per machine) without a thread each. Closing the executor leaves the loop running.
     */
    public static Executor start(ExecutorConfig config, EventLoop sharedLoop) {
        return start(config, sharedLoop, sharedLoop, false);
    }

    private static Executor start(ExecutorConfig config, EventLoopGroup group, EventLoop loop, boolean ownsGroup) {
        Path spool;
        try {
            spool = Files.createTempDirectory(TempDirs.root(), "falkon-executor-");
        } catch (IOException e) {
            if (ownsGroup) {
                group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            }
            throw new UncheckedIOException("cannot create the executor's spool directory", e);
        }
        Executor ex;
        try {
            ex = new Executor(config, group, loop, ownsGroup, spool);
        } catch (IOException | InterruptedException | RuntimeException e) {
            if (ownsGroup) {
                group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            }
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("cannot set up the executor's data cache: " + e.getMessage(), e);
        }
        try {
            ex.connectFirst();
        } catch (RuntimeException e) {
            ex.close();
            throw e;
        }
        return ex;
    }

    private String where() {
        return session.address();
    }

    /**
     * The first connection: while nothing listens at the address the executor dials again for up to
     * {@link ExecutorConfig#reconnectFor()} (its dispatcher may be starting beside it); a peer that
     * answers but refuses it (wrong token, not a Falkon port) is the end at once.
     */
    private void connectFirst() {
        try {
            session.start().get(config.reconnectFor().toMillis() + 2 * config.connectTimeout().toMillis(),
                    TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while connecting to " + where(), e);
        } catch (ExecutionException | TimeoutException e) {
            Throwable c = e instanceof ExecutionException ? e.getCause() : e;
            throw new IllegalStateException("dispatcher at " + where() + " did not accept the executor: "
                    + (c.getMessage() == null ? c.toString() : c.getMessage()), c);
        }
        if (!config.idleExit().isZero()) {
            long checkMillis = Math.max(50, Math.min(1000, config.idleExit().toMillis() / 4));
            loop.scheduleAtFixedRate(this::leaveIfIdle, checkMillis, checkMillis, TimeUnit.MILLISECONDS);
        }
        if (cache != null) {
            loop.scheduleAtFixedRate(cacheReports::sendFullSummary, CACHE_SUMMARY_SECONDS, CACHE_SUMMARY_SECONDS,
                    TimeUnit.SECONDS);
        }
        // emulated executors on a shared loop come by the thousand: one line each would drown the log
        Level level = ownsGroup ? Level.INFO : Level.DEBUG;
        log.atLevel(level).log("executor {} registered with {} ({} slots, {}{})", config.executorId(), where(),
                config.slots(), config.noExec() ? "NO-EXEC benchmark mode: tasks are not run"
                        : "processes via " + slots.runnerName(), cache == null ? ""
                        : ", " + (cache.capacity() >> 20) + " MiB " + cache.policy().name() + " cache served on port "
                        + peerServer.port());
    }

    public String id() {
        return config.executorId();
    }

    public ExecutorConfig config() {
        return config;
    }

    /** How many times it has registered again after losing its dispatcher. */
    public int reconnects() {
        return reconnects;
    }

    /** Completes (with the reason) when the executor has stopped for good. */
    public CompletableFuture<String> terminated() {
        return terminated;
    }

    /** The heartbeat interval the dispatcher announced (0: off). */
    public long heartbeatMillis() {
        return session.heartbeatMillis();
    }

    /** Space free to this user in {@code dir}'s file system, in MiB; -1 when it cannot be read (none advertised). */
    static long freeMiB(Path dir) {
        try {
            return Files.getFileStore(dir).getUsableSpace() >> 20;
        } catch (IOException | SecurityException e) {
            return -1;
        }
    }

    /** What it offers: the ones given, and the GPUs found here unless {@code gpus} is among them. */
    private static java.util.List<io.falkon.executor.run.ResourceOffer> offers(
            java.util.List<io.falkon.executor.run.ResourceOffer> given) {
        java.util.List<io.falkon.executor.run.ResourceOffer> all = new java.util.ArrayList<>(given);
        if (given.stream().noneMatch(o -> o.name().equals(io.falkon.protocol.NamedResources.GPUS))) {
            io.falkon.executor.run.ResourceOffer gpus = io.falkon.executor.run.ResourceOffer.detectGpus(System.getenv());
            if (gpus != null) {
                all.add(gpus);
            }
        }
        for (io.falkon.executor.run.ResourceOffer o : all) {
            if (o.amount() > 0) {
                log.info("offering {}", o);
            }
        }
        return all;
    }

    /** The connection's events, on the I/O thread. */
    private final class Events implements PeerSession.Listener {
        @Override
        public void welcomed(Channel ch, Message.Welcome welcome, boolean again) {
            Map<String, String> attrs = new LinkedHashMap<>();
            attrs.put("impl", "java");
            attrs.put("pid", Long.toString(ProcessHandle.current().pid()));
            attrs.put("java", System.getProperty("java.version"));
            attrs.put("runner", slots == null ? "no-exec" : slots.runnerName());
            attrs.put("prefetch", prefetch.auto() ? "auto" : Integer.toString(config.prefetch()));
            if (config.memoryMiB() >= 0) {
                attrs.put("memoryMiB", Long.toString(config.memoryMiB()));
            }
            long disk = config.diskMiB() >= 0 ? config.diskMiB() : freeMiB(config.workDir());
            if (disk >= 0) {
                attrs.put("diskMiB", Long.toString(disk));
            }
            io.falkon.protocol.NamedResources offered = slots == null ? null : slots.offered();
            if (offered != null) {
                attrs.put(io.falkon.protocol.NamedResources.ATTRIBUTE, offered.attribute());
            }
            if (peerServer != null) {
                attrs.put("cachePort", Integer.toString(peerServer.port()));
                if (config.cacheHost() != null) {
                    attrs.put("cacheHost", config.cacheHost());
                }
            }
            ch.write(new Message.Register(config.executorId(), hostName(), config.slots(),
                    config.noExec() ? Protocol.REGISTER_NO_EXEC : 0, attrs), ch.voidPromise());
            if (cache != null) {
                // what was held for the last session's tasks: that dispatcher re-runs a producer it lost,
                // and a new one has no task that needs them
                cache.releaseAll();
                ch.write(cacheReports.fullSummary(), ch.voidPromise()); // a new dispatcher knows nothing yet
            }
            prefetch.reset();
            ch.writeAndFlush(new Message.Credit(config.slots() + prefetch.initial()), ch.voidPromise());
            if (again) {
                reconnects++;
                log.info("executor {} registered again with {}", config.executorId(), where());
            }
        }

        @Override
        public void received(Message m) {
            switch (m.type()) {
                case DISPATCH -> dispatched((Message.Dispatch) m);
                case CANCEL -> {
                    for (long id : ((Message.Cancel) m).taskIds()) {
                        if (slots != null) {
                            slots.cancel(id);
                        }
                    }
                }
                case REPLICATE -> {
                    if (replicator != null) {
                        replicator.replicate((Message.Replicate) m);
                    }
                }
                case RELEASE -> {
                    if (cache != null) {
                        cache.release(((Message.Release) m).ids());
                    }
                }
                default -> log.warn("ignoring unexpected {} from the dispatcher", m.type());
            }
        }

        @Override
        public void lost(String why) {
            // what ran for the old connection is the dispatcher's to run again
            results.clear();
            if (slots != null) {
                slots.cancelAll();
            }
        }

        @Override
        public void refused(Message.ErrorMessage e) {
            String why = "dispatcher error " + e.errorCode() + ": " + LogSafe.text(e.message());
            log.info("executor {}: {}; stopping", config.executorId(), why);
            if (slots != null) {
                slots.cancelAll();
            }
            terminated.complete(why);
        }

        @Override
        public void gaveUp(String why) {
            if (!closing) {
                log.info("executor {}: {}; stopping", config.executorId(), why);
                if (slots != null) {
                    slots.cancelAll();
                }
                terminated.complete(why);
            }
        }
    }

    private void dispatched(Message.Dispatch d) {
        List<Message.DispatchedTask> tasks = d.tasks();
        lastWorkMicros = config.clock().tickMicros();
        Channel ch = session.channel();
        if (closing || ch == null) {
            if (ch != null) {
                // leaving: refuse, so that the dispatcher sends them elsewhere at once
                List<Message.TaskResult> refused = new ArrayList<>(tasks.size());
                for (Message.DispatchedTask t : tasks) {
                    refused.add(new Message.TaskResult(t.taskId(), t.attempt(), Execution.of(TaskStatus.REJECTED,
                            "executor " + config.executorId() + " is shutting down", Clock.SYSTEM.nowMicros())));
                }
                ch.writeAndFlush(new Message.Result(0, refused), ch.voidPromise());
            }
            return;
        }
        if (config.noExec()) {
            noExec.complete(ch, tasks);
            return;
        }
        int gen = session.generation();
        for (Message.DispatchedTask t : tasks) {
            TaskSpec spec;
            try {
                spec = TaskSpecCodec.decode(t.spec());
            } catch (RuntimeException e) {
                results.add(gen, TaskSpecCodec.cores(t.spec()), new Message.TaskResult(t.taskId(), t.attempt(), Execution.of(TaskStatus.LAUNCH_FAILED,
                        "undecodable task spec: " + e.getMessage(), Clock.SYSTEM.nowMicros())));
                continue;
            }
            Map<String, List<String>> hints = Map.of();
            boolean bypass = false;
            for (ExtField f : t.ext()) {
                if (f.tag() == ExtTags.HINTS) {
                    try {
                        hints = DataCodec.decodeHints(f.value());
                    } catch (RuntimeException e) {
                        log.warn("ignoring undecodable hints for task {}: {}", t.taskId(), e.getMessage());
                    }
                } else if (f.tag() == ExtTags.BYPASS_CACHE) {
                    bypass = true;
                }
            }
            slots.submit(new Job(t.taskId(), t.attempt(), spec, gen, hints, bypass));
        }
    }


    /**
     * On the I/O thread: with --idle-exit, leaves once it has held no task for that long. Whether it
     * holds one is read from the slot pool (waiting and running jobs) and the results not yet sent,
     * so a reconnection that dropped jobs changes nothing to count.
     */
    private void leaveIfIdle() {
        if (closed.get()) {
            return;
        }
        long now = config.clock().tickMicros();
        boolean busy = (slots != null && slots.held() > 0) || results.unsent() > 0;
        if (busy) {
            lastWorkMicros = now;
            return;
        }
        long since = Math.max(lastWorkMicros, results.lastSentMicros());
        if (now - since >= config.idleExit().toNanos() / 1000) {
            log.info("executor {} idle for {} s: leaving", config.executorId(), config.idleExit().toSeconds());
            terminated.complete("idle for " + config.idleExit().toSeconds() + " s");
            new Thread(this::close, "falkon-idle-exit").start(); // close() waits for this very event loop
        }
    }

    /** Refuses new work, disconnects, kills running tasks, removes the spool directory. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        closing = true;
        session.close();
        if (slots != null) {
            slots.close();
        }
        if (archive != null) {
            try {
                archive.close(); // its end blocks: every entry was on disk already
            } catch (IOException e) {
                log.warn("cannot finish the output archive: {}", e.toString());
            }
        }
        if (peerServer != null) {
            peerServer.close();
        }
        if (replicator != null) {
            replicator.close();
        }
        if (cache != null) {
            cache.close();
        }
        if (ownsGroup) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        }
        try (Stream<Path> files = Files.walk(spoolDir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            log.debug("could not remove {}: {}", spoolDir, e.toString());
        }
        terminated.complete("closed");
    }
}
