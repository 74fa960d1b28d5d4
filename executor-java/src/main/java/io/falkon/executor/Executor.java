package io.falkon.executor;

import io.falkon.datacache.CacheListener;
import io.falkon.datacache.CacheStore;
import io.falkon.datacache.eviction.EvictionPolicies;
import io.falkon.datacache.fetch.StoreFetcher;
import io.falkon.datacache.peer.PeerServer;
import io.falkon.executor.run.Job;
import io.falkon.executor.run.SlotPool;
import io.falkon.executor.run.Staging;
import io.falkon.protocol.DataCodec;
import io.falkon.protocol.ExtTags;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Execution;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.Message;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskSpecCodec;
import io.falkon.protocol.TaskStatus;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.time.Duration;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * The Java executor: dials the dispatcher, registers its slots, runs the tasks it is sent as OS
 * processes, and returns each result with its credit (piggy-backing). Results finishing close
 * together go back in one RESULT frame.
 *
 * <p>When the connection drops (the dispatcher crashed, the network failed, heartbeats stopped)
 * the executor kills what it was running (the dispatcher runs those tasks again elsewhere) and
 * dials again with exponential back-off for up to {@link ExecutorConfig#reconnectFor()}, then
 * registers afresh. A dispatcher that shuts down on purpose says so, and the executor exits.
 *
 * <p>In no-exec mode (benchmarking only) it completes every task at once without starting a
 * process, and says so in each result's flags.
 */
public final class Executor implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Executor.class);
    private static final AtomicInteger SEQUENCE = new AtomicInteger();
    private static final long HEARTBEAT_MILLIS = 5000;
    /** Silence from the dispatcher for this long (three missed heartbeats) means it is gone. */
    private static final long DEAD_AFTER_MILLIS = 3 * HEARTBEAT_MILLIS;
    private static final long BACKOFF_FIRST_MILLIS = 100;
    private static final long BACKOFF_MAX_MILLIS = 5000;
    static final String LAUNCH_MECHANISM = "jdk.lang.Process.launchMechanism";
    /** With prefetch: results wait for company this long at most, while the slots still have work. */
    static final long RESULT_LINGER_MILLIS = 10;
    private static final byte[] NO_BYTES = new byte[0];
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
    /** False when the loop is shared with other executors in this JVM (emulation): close leaves it running. */
    private final boolean ownsGroup;
    private final Path spoolDir;
    private final SlotPool slots;
    /** The data cache and the server that shares it with peers; null without a cache. */
    private final CacheStore cache;
    private final PeerServer peerServer;
    private final ConcurrentLinkedQueue<Object[]> cacheChanges = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean cacheFlushScheduled = new AtomicBoolean();
    private final Bootstrap bootstrap;
    private final ConcurrentLinkedQueue<Message.TaskResult> finished = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean flushScheduled = new AtomicBoolean();
    private final AtomicBoolean lingerScheduled = new AtomicBoolean();
    private final AtomicInteger unsent = new AtomicInteger();
    /** Tasks received and not yet reported back; with {@link #idleSinceNanos}, for --idle-exit. */
    private final AtomicInteger holding = new AtomicInteger();
    private volatile long idleSinceNanos = System.nanoTime();
    private final CompletableFuture<Void> firstRegistration = new CompletableFuture<>();
    private final CompletableFuture<String> terminated = new CompletableFuture<>();
    private volatile Channel channel;
    /** Counts connections; results of tasks from an earlier connection are dropped. */
    private volatile int generation;
    private volatile boolean closing;
    private final AtomicBoolean closed = new AtomicBoolean();
    private int reconnects;
    private long disconnectedAtNanos;
    private int attempt;

    private Executor(ExecutorConfig config, EventLoopGroup group, boolean ownsGroup, Path spoolDir)
            throws IOException, InterruptedException {
        this.config = config;
        this.group = group;
        this.ownsGroup = ownsGroup;
        this.spoolDir = spoolDir;
        // no-exec executors fetch nothing; an HTTP client costs a selector thread each
        HttpClient http = config.noExec() ? null
                : HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        StoreFetcher store = config.noExec() ? null : new StoreFetcher(config.storeRoot(), http, config.storeBandwidth());
        if (config.cacheCapacity() > 0 && !config.noExec()) {
            Path dir = config.cacheDir() != null ? config.cacheDir() : spoolDir.resolve("cache");
            this.cache = new CacheStore(dir, config.cacheCapacity(), EvictionPolicies.byName(config.eviction()), store,
                    http, new CacheListener() {
                        @Override
                        public void added(String id, long size) {
                            cacheChanged(new Object[]{id, size});
                        }

                        @Override
                        public void removed(String id) {
                            cacheChanged(new Object[]{id});
                        }
                    });
            this.peerServer = PeerServer.start(cache, "0.0.0.0", // peers on other nodes
                    config.cachePort());
        } else {
            this.cache = null;
            this.peerServer = null;
        }
        this.slots = config.noExec() ? null : new SlotPool(config.slots(), config.runner(), spoolDir,
                config.outputCap(), config.spoolLimit(), config.workDir(),
                new Staging(cache, store, spoolDir.resolve("sandboxes")), this::taskFinished);
        this.bootstrap = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) config.connectTimeout().toMillis())
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new IdleStateHandler(DEAD_AFTER_MILLIS, HEARTBEAT_MILLIS, 0,
                                TimeUnit.MILLISECONDS));
                        io.falkon.protocol.netty.Frames.install(ch.pipeline(), Protocol.DEFAULT_MAX_FRAME_LENGTH);
                        ch.pipeline().addLast(new Handler(generation + 1));
                    }
                });
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
        return start(config, group, true);
    }

    /**
     * Like {@link #start(ExecutorConfig)}, but on an event loop the caller owns and may share
     * among many executors in one JVM: how benchmarks emulate thousands of executors (the paper
     * ran 900 per machine) without a thread each. Closing the executor leaves the loop running.
     */
    public static Executor start(ExecutorConfig config, io.netty.channel.EventLoop sharedLoop) {
        return start(config, sharedLoop, false);
    }

    private static Executor start(ExecutorConfig config, EventLoopGroup group, boolean ownsGroup) {
        Path spool;
        try {
            spool = Files.createTempDirectory("falkon-executor-");
        } catch (IOException e) {
            if (ownsGroup) {
                group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            }
            throw new UncheckedIOException("cannot create the executor's spool directory", e);
        }
        Executor ex;
        try {
            ex = new Executor(config, group, ownsGroup, spool);
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
        return config.dispatcherHost() + ":" + config.dispatcherPort();
    }

    /** The first connection must work: an executor pointed at the wrong place fails at once. */
    private void connectFirst() {
        ChannelFuture cf = bootstrap.connect(new InetSocketAddress(config.dispatcherHost(), config.dispatcherPort()))
                .awaitUninterruptibly();
        if (!cf.isSuccess()) {
            throw new IllegalStateException("cannot connect to dispatcher at " + where() + ": "
                    + (cf.cause() == null ? "timed out" : cf.cause().getMessage()), cf.cause());
        }
        opened(cf.channel());
        if (!config.idleExit().isZero()) {
            long checkMillis = Math.max(50, Math.min(1000, config.idleExit().toMillis() / 4));
            group.scheduleAtFixedRate(this::leaveIfIdle, checkMillis, checkMillis, TimeUnit.MILLISECONDS);
        }
        if (cache != null) {
            // the index is loosely coherent: a full summary now and then repairs any drift
            group.scheduleAtFixedRate(this::sendFullSummary, CACHE_SUMMARY_SECONDS, CACHE_SUMMARY_SECONDS,
                    TimeUnit.SECONDS);
        }
        try {
            firstRegistration.get(config.connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            Throwable c = e instanceof java.util.concurrent.ExecutionException ? e.getCause() : e;
            throw new IllegalStateException("dispatcher at " + where() + " did not accept the executor: "
                    + (c.getMessage() == null ? c.toString() : c.getMessage()), c);
        }
        // emulated executors on a shared loop come by the thousand: one line each would drown the log
        org.slf4j.event.Level level = ownsGroup ? org.slf4j.event.Level.INFO : org.slf4j.event.Level.DEBUG;
        log.atLevel(level).log("executor {} registered with {} ({} slots, {}{})", config.executorId(), where(), config.slots(),
                config.noExec() ? "NO-EXEC benchmark mode: tasks are not run" : "processes via " + slots.runnerName(),
                cache == null ? "" : ", " + (cache.capacity() >> 20) + " MiB " + cache.policy().name()
                        + " cache served on port " + peerServer.port());
    }

    private void opened(Channel ch) {
        generation++;
        channel = ch;
        ch.writeAndFlush(Message.Hello.of(Protocol.ROLE_EXECUTOR, config.token(),
                "falkon-java-executor/" + Protocol.VERSION));
    }

    /** The connection is gone: stop its work, then dial again (or give up). On the I/O thread. */
    private void disconnected(String why) {
        if (closing || terminated.isDone()) {
            return;
        }
        int lostGeneration = generation;
        generation++; // results of the old connection's tasks are now stale
        finished.clear();
        unsent.set(0);
        if (slots != null) {
            slots.cancelAll();
        }
        if (config.reconnectFor().isZero()) {
            log.info("executor {}: {}; stopping", config.executorId(), why);
            terminated.complete(why);
            return;
        }
        if (disconnectedAtNanos == 0) {
            disconnectedAtNanos = System.nanoTime();
            attempt = 0;
            log.warn("executor {}: {} (connection {}); reconnecting for up to {} s", config.executorId(), why,
                    lostGeneration, config.reconnectFor().toSeconds());
        }
        scheduleReconnect();
    }

    private void scheduleReconnect() {
        long elapsed = System.nanoTime() - disconnectedAtNanos;
        if (elapsed > config.reconnectFor().toNanos()) {
            String why = "no dispatcher at " + where() + " for " + config.reconnectFor().toSeconds() + " s";
            log.error("executor {}: {}; giving up", config.executorId(), why);
            terminated.complete(why);
            return;
        }
        long base = Math.min(BACKOFF_MAX_MILLIS, BACKOFF_FIRST_MILLIS << Math.min(attempt++, 10));
        long delay = base / 2 + ThreadLocalRandom.current().nextLong(base / 2 + 1); // jitter: no thundering herd
        group.schedule(() -> {
            if (closing) {
                return;
            }
            bootstrap.connect(new InetSocketAddress(config.dispatcherHost(), config.dispatcherPort()))
                    .addListener((ChannelFuture f) -> {
                        if (f.isSuccess()) {
                            opened(f.channel());
                        } else {
                            scheduleReconnect();
                        }
                    });
        }, delay, TimeUnit.MILLISECONDS);
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

    /**
     * A slot finished a task. Without prefetch the result (and its credit) goes back at once. With
     * prefetch it goes at once only when enough results have gathered or no job is waiting locally;
     * otherwise it lingers briefly so that results, credits and the dispatches they trigger travel in
     * bundles.
     */
    private void taskFinished(Job job, Message.TaskResult r) {
        if (job.generation() != generation) {
            return; // from a connection that is gone: the dispatcher has re-queued the task already
        }
        finished.add(r);
        int waiting = unsent.incrementAndGet();
        Channel ch = channel;
        if (ch == null) {
            return;
        }
        int prefetch = config.prefetch();
        if (prefetch == 0 || waiting >= Math.max(1, prefetch / 2) || slots == null || slots.queued() == 0) {
            if (flushScheduled.compareAndSet(false, true)) {
                ch.eventLoop().execute(this::flushResults);
            }
        } else if (lingerScheduled.compareAndSet(false, true)) {
            ch.eventLoop().schedule(() -> {
                lingerScheduled.set(false);
                flushResults();
            }, RESULT_LINGER_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** On the I/O thread: every result finished since the last flush, with as many credits, in one frame. */
    private void flushResults() {
        flushScheduled.set(false);
        List<Message.TaskResult> batch = new ArrayList<>();
        Message.TaskResult r;
        while ((r = finished.poll()) != null) {
            batch.add(r);
        }
        if (batch.isEmpty()) {
            return;
        }
        unsent.addAndGet(-batch.size());
        if (holding.addAndGet(-batch.size()) <= 0) {
            idleSinceNanos = System.nanoTime();
        }
        Channel ch = channel;
        if (ch != null && ch.isActive()) {
            ch.writeAndFlush(new Message.Result(batch.size(), batch), ch.voidPromise());
        }
    }

    private void dispatched(ChannelHandlerContext ctx, Message.Dispatch d) {
        List<Message.DispatchedTask> tasks = d.tasks();
        idleSinceNanos = System.nanoTime();
        if (closing) {
            // leaving: refuse, so that the dispatcher sends them elsewhere at once
            List<Message.TaskResult> refused = new ArrayList<>(tasks.size());
            for (Message.DispatchedTask t : tasks) {
                refused.add(new Message.TaskResult(t.taskId(), t.attempt(),
                        Execution.of(TaskStatus.REJECTED, "executor " + config.executorId() + " is shutting down",
                                nowMicros())));
            }
            ctx.writeAndFlush(new Message.Result(0, refused), ctx.voidPromise());
            return;
        }
        if (config.noExec()) {
            // benchmark mode: complete everything at once, in one RESULT frame
            long now = nowMicros();
            List<Message.TaskResult> results = new ArrayList<>(tasks.size());
            for (Message.DispatchedTask t : tasks) {
                results.add(new Message.TaskResult(t.taskId(), t.attempt(), new Execution(TaskStatus.EXITED, 0,
                        Execution.NO_EXEC, now, now, NO_BYTES, NO_BYTES, "", ExtField.NONE)));
            }
            ctx.writeAndFlush(new Message.Result(results.size(), results), ctx.voidPromise());
            return;
        }
        int gen = generation;
        holding.addAndGet(tasks.size());
        for (Message.DispatchedTask t : tasks) {
            TaskSpec spec;
            try {
                spec = TaskSpecCodec.decode(t.spec());
            } catch (RuntimeException e) {
                Job bad = new Job(t.taskId(), t.attempt(), null, gen);
                taskFinished(bad, new Message.TaskResult(t.taskId(), t.attempt(),
                        Execution.of(TaskStatus.LAUNCH_FAILED, "undecodable task spec: " + e.getMessage(), nowMicros())));
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

    /** Every cached object, replacing what the dispatcher's index holds for this executor. */
    private Message.CacheUpdate fullCacheSummary() {
        cacheChanges.clear(); // the summary supersedes them
        List<Message.CachedObject> all = new ArrayList<>();
        cache.contents().forEach((id, size) -> all.add(new Message.CachedObject(id, size)));
        return new Message.CacheUpdate(true, all, List.of());
    }

    /** A cache change (on a slot thread): reported to the dispatcher, coalesced with others. */
    private void cacheChanged(Object[] change) {
        cacheChanges.add(change);
        Channel ch = channel;
        if (ch != null && cacheFlushScheduled.compareAndSet(false, true)) {
            ch.eventLoop().execute(this::flushCacheChanges);
        }
    }

    private void flushCacheChanges() {
        cacheFlushScheduled.set(false);
        List<Message.CachedObject> added = new ArrayList<>();
        List<String> removed = new ArrayList<>();
        Object[] c;
        while ((c = cacheChanges.poll()) != null) {
            String id = (String) c[0];
            if (c.length == 2) {
                removed.remove(id);
                added.add(new Message.CachedObject(id, (Long) c[1]));
            } else {
                added.removeIf(o -> o.id().equals(id));
                removed.add(id);
            }
        }
        Channel ch = channel;
        if ((!added.isEmpty() || !removed.isEmpty()) && ch != null && ch.isActive()) {
            ch.writeAndFlush(new Message.CacheUpdate(false, added, removed), ch.voidPromise());
        }
    }

    private void sendFullSummary() {
        Channel ch = channel;
        if (cache != null && ch != null && ch.isActive()) {
            ch.writeAndFlush(fullCacheSummary(), ch.voidPromise());
        }
    }

    private static long nowMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1000;
    }

    private final class Handler extends SimpleChannelInboundHandler<Message> {
        private final int connection;

        Handler(int connection) {
            this.connection = connection;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Message m) {
            switch (m.type()) {
                case DISPATCH -> dispatched(ctx, (Message.Dispatch) m);
                case CANCEL -> {
                    for (long id : ((Message.Cancel) m).taskIds()) {
                        if (slots != null) {
                            slots.cancel(id);
                        }
                    }
                }
                case WELCOME -> {
                    Map<String, String> attrs = new LinkedHashMap<>();
                    attrs.put("impl", "java");
                    attrs.put("pid", Long.toString(ProcessHandle.current().pid()));
                    attrs.put("java", System.getProperty("java.version"));
                    attrs.put("runner", slots == null ? "no-exec" : slots.runnerName());
                    attrs.put("prefetch", Integer.toString(config.prefetch()));
                    if (peerServer != null) {
                        attrs.put("cachePort", Integer.toString(peerServer.port()));
                        if (config.cacheHost() != null) {
                            attrs.put("cacheHost", config.cacheHost());
                        }
                    }
                    ctx.write(new Message.Register(config.executorId(), hostName(), config.slots(),
                            config.noExec() ? Protocol.REGISTER_NO_EXEC : 0, attrs));
                    if (cache != null) {
                        ctx.write(fullCacheSummary()); // a new dispatcher knows nothing yet
                    }
                    ctx.writeAndFlush(new Message.Credit(config.slots() + config.prefetch()));
                    if (disconnectedAtNanos != 0) {
                        reconnects++;
                        log.info("executor {} registered again with {} after {} ms", config.executorId(), where(),
                                (System.nanoTime() - disconnectedAtNanos) / 1_000_000);
                        disconnectedAtNanos = 0;
                    }
                    firstRegistration.complete(null);
                }
                case HEARTBEAT -> {
                }
                case ERROR -> {
                    Message.ErrorMessage e = (Message.ErrorMessage) m;
                    String why = "dispatcher error " + e.errorCode() + ": " + e.message();
                    firstRegistration.completeExceptionally(new IllegalStateException(e.message()));
                    if (e.errorCode() == ErrorCode.SHUTTING_DOWN || e.errorCode() == ErrorCode.DUPLICATE_EXECUTOR
                            || e.errorCode() == ErrorCode.UNAUTHORIZED
                            || e.errorCode() == ErrorCode.UNSUPPORTED_VERSION) {
                        // on purpose, or not fixable by trying again: stop
                        log.info("executor {}: {}; stopping", config.executorId(), why);
                        terminated.complete(why);
                    } else {
                        log.error("executor {}: {}", config.executorId(), why);
                    }
                }
                default -> log.warn("ignoring unexpected {} from the dispatcher", m.type());
            }
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            if (evt instanceof IdleStateEvent idle) {
                if (idle.state() == io.netty.handler.timeout.IdleState.READER_IDLE) {
                    log.warn("executor {}: nothing from the dispatcher for {} ms", config.executorId(),
                            DEAD_AFTER_MILLIS);
                    ctx.close();
                } else {
                    ctx.writeAndFlush(new Message.Heartbeat(nowMicros()), ctx.voidPromise());
                }
                return;
            }
            super.userEventTriggered(ctx, evt);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            firstRegistration.completeExceptionally(new IllegalStateException("connection closed during registration"));
            if (connection == generation) {
                disconnected("the connection to the dispatcher closed");
            }
            super.channelInactive(ctx);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            log.warn("executor {}: connection failed: {}", config.executorId(), cause.toString());
            ctx.close();
        }
    }

    /** On the I/O thread: with --idle-exit, leaves once no task has been held for that long. */
    private void leaveIfIdle() {
        if (holding.get() > 0 || closed.get()) {
            return;
        }
        long idle = System.nanoTime() - idleSinceNanos;
        if (idle >= config.idleExit().toNanos()) {
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
        Channel ch = channel;
        if (ch != null) {
            ch.close().awaitUninterruptibly();
        }
        if (slots != null) {
            slots.close();
        }
        if (peerServer != null) {
            peerServer.close();
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
