package io.falkon.executor;

import io.falkon.protocol.auth.Token;
import io.falkon.protocol.time.Clock;
import io.falkon.datacache.Revalidate;
import io.falkon.datacache.fetch.TokenBucket;
import io.falkon.protocol.tls.Tls;
import io.falkon.executor.run.SlotPool;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * How to run an {@link Executor}. Immutable; start from {@link #of} and change what differs with the
 * {@code with...} methods (or {@link #toBuilder()}).
 */
public final class ExecutorConfig {
    public static final int DEFAULT_OUTPUT_CAP = 64 * 1024;
    public static final long DEFAULT_SPOOL_LIMIT = 1L << 30;

    private final String dispatcherHost;
    private final int dispatcherPort;
    private final String executorId;
    private final int slots;
    private final long memoryMiB;
    private final long diskMiB;
    private final io.falkon.executor.run.WorkerLimits workerLimits;
    private final java.util.List<io.falkon.executor.run.ResourceOffer> resources;
    private final boolean noExec;
    private final boolean noExecSleep;
    private final int outputCap;
    private final long spoolLimit;
    private final Path workDir;
    private final Token token;
    private final Duration connectTimeout;
    private final SlotPool.Runner runner;
    private final int prefetch;
    private final Duration reconnectFor;
    private final Duration idleExit;
    private final long cacheCapacity;
    private final Path cacheDir;
    private final String eviction;
    private final Path storeRoot;
    private final Path outputRoot;
    private final Revalidate revalidate;
    private final TokenBucket storeBandwidth;
    private final String cacheHost;
    private final int cachePort;
    private final Tls tls;
    private final Clock clock;

    private ExecutorConfig(Builder b) {
        this.dispatcherHost = Objects.requireNonNull(b.dispatcherHost, "dispatcherHost");
        this.dispatcherPort = b.dispatcherPort;
        this.executorId = Objects.requireNonNull(b.executorId, "executorId");
        this.slots = b.slots;
        this.memoryMiB = b.memoryMiB;
        this.diskMiB = b.diskMiB;
        this.workerLimits = b.workerLimits;
        this.resources = b.resources;
        this.noExec = b.noExec;
        this.noExecSleep = b.noExecSleep;
        if (noExecSleep && !noExec) {
            throw new IllegalArgumentException("sleep emulation needs no-exec mode");
        }
        this.outputCap = b.outputCap;
        this.spoolLimit = b.spoolLimit;
        this.workDir = Objects.requireNonNull(b.workDir, "workDir");
        this.token = Objects.requireNonNull(b.token, "token");
        this.connectTimeout = Objects.requireNonNull(b.connectTimeout, "connectTimeout");
        this.runner = Objects.requireNonNull(b.runner, "runner");
        this.prefetch = b.prefetch;
        this.reconnectFor = Objects.requireNonNull(b.reconnectFor, "reconnectFor");
        this.idleExit = Objects.requireNonNull(b.idleExit, "idleExit");
        this.clock = Objects.requireNonNull(b.clock, "clock");
        if (idleExit.isNegative()) {
            throw new IllegalArgumentException("idle exit must not be negative");
        }
        this.cacheCapacity = b.cacheCapacity;
        this.cacheDir = b.cacheDir;
        this.eviction = Objects.requireNonNull(b.eviction, "eviction");
        this.storeRoot = b.storeRoot;
        this.outputRoot = b.outputRoot;
        this.revalidate = Objects.requireNonNull(b.revalidate, "revalidate");
        this.storeBandwidth = b.storeBandwidth;
        this.cacheHost = b.cacheHost;
        this.cachePort = b.cachePort;
        this.tls = b.tls;
        if (slots < 1) {
            throw new IllegalArgumentException("slots must be at least 1, got " + slots);
        }
        if (outputCap < 0) {
            throw new IllegalArgumentException("outputCap must not be negative");
        }
        if (executorId.isEmpty()) {
            throw new IllegalArgumentException("executorId must not be empty");
        }
        if (prefetch < Prefetch.AUTO) {
            throw new IllegalArgumentException("prefetch must not be negative (or auto)");
        }
        if (cacheCapacity < 0) {
            throw new IllegalArgumentException("cache capacity must not be negative");
        }
        if (cachePort < 0 || cachePort > 65535) {
            throw new IllegalArgumentException("cache port out of range");
        }
    }

    /**
     * One slot per core, 64 KiB output cap, the current directory, a generated id, posix_spawn where
     * available, no prefetch, reconnecting for 10 minutes, no data cache.
     */
    public static ExecutorConfig of(String host, int port) {
        return new Builder(host, port).build();
    }

    /** Where the dispatcher listens. */
    public String dispatcherHost() {
        return dispatcherHost;
    }

    public int dispatcherPort() {
        return dispatcherPort;
    }

    /** Unique name among the dispatcher's executors. */
    public String executorId() {
        return executorId;
    }

    /** Tasks run at once. */
    public int slots() {
        return slots;
    }

    /**
     * The memory it advertises for tasks that state theirs, in MiB (the dispatcher sends a task only
     * where its stated memory fits); -1 to advertise none. Default: the node's physical memory.
     */
    public long memoryMiB() {
        return memoryMiB;
    }

    /**
     * The scratch space it advertises for tasks that state theirs, in MiB (the dispatcher sends a
     * task only where its stated disk fits beside the others'); -1, the default: the space free to
     * this user in the file system of {@link #workDir()} when it registers.
     */
    public long diskMiB() {
        return diskMiB;
    }

    /** When a persistent worker is replaced by a fresh one (none by default). */
    /**
     * The named resources it offers ({@code --resource}); GPUs not among them are found by themselves
     * ({@link io.falkon.executor.run.ResourceOffer#detectGpus}) unless {@code gpus=0} is given.
     */
    public java.util.List<io.falkon.executor.run.ResourceOffer> resources() {
        return resources;
    }

    /** The same with these named resources offered (docs/cli.md "GPUs and other resources"). */
    public ExecutorConfig withResources(java.util.List<io.falkon.executor.run.ResourceOffer> offers) {
        Builder b = toBuilder();
        b.resources = java.util.List.copyOf(offers);
        return b.build();
    }

    public io.falkon.executor.run.WorkerLimits workerLimits() {
        return workerLimits;
    }

    /** MemTotal of /proc/meminfo in MiB, or -1 where there is none (not Linux). */
    static long physicalMemoryMiB() {
        try (java.io.BufferedReader r = java.nio.file.Files.newBufferedReader(Path.of("/proc/meminfo"))) {
            for (String line; (line = r.readLine()) != null; ) {
                if (line.startsWith("MemTotal:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024; // kB
                }
            }
        } catch (java.io.IOException | NumberFormatException e) {
            // no /proc: advertise nothing
        }
        return -1;
    }

    /** Complete tasks without running them: measures dispatch overhead only. */
    public boolean noExec() {
        return noExec;
    }

    /**
     * In no-exec mode, a task {@code sleep S} is held S seconds on a timer before its result is sent:
     * task length emulated without a process, so one machine stands in for thousands of executors
     * running tasks of a given length (benchmarking only).
     */
    public boolean noExecSleep() {
        return noExecSleep;
    }

    /** Bytes of stdout and of stderr returned per task (the rest dropped, the result marked truncated). */
    public int outputCap() {
        return outputCap;
    }

    /** A task whose combined output exceeds this many bytes is killed. */
    public long spoolLimit() {
        return spoolLimit;
    }

    /** Working directory of tasks that set none and read no inputs. */
    public Path workDir() {
        return workDir;
    }

    /** The dispatcher's shared secret, empty for none. */
    /** What it presents to the dispatcher, and what its peer cache server requires. */
    public Token token() {
        return token;
    }

    public Duration connectTimeout() {
        return connectTimeout;
    }

    /** How to start processes: posix_spawn (fast, Linux/glibc) or the JDK's ProcessBuilder. */
    public SlotPool.Runner runner() {
        return runner;
    }

    /**
     * Tasks to hold beyond the free slots, or {@code -1} for automatic (the default; see
     * {@link Prefetch}: none while tasks are long or the executor has a data cache, one per slot once
     * they are seen to be short). 0 is the papers' behaviour: the dispatcher only sends a task when a
     * slot is free. With prefetch a finished slot starts the next task at once and results travel
     * back in batches: higher throughput for short tasks, less freedom for the dispatcher to choose
     * where a task runs.
     */
    public int prefetch() {
        return prefetch;
    }

    /** After losing the dispatcher, keep dialling with back-off this long, then stop (zero: at once). */
    public Duration reconnectFor() {
        return reconnectFor;
    }

    /**
     * Leave after holding no task for this long (zero: never). The provisioner's distributed
     * release policy: an idle executor gives its node back, and an allocation whose executors have
     * all left ends.
     */
    public Duration idleExit() {
        return idleExit;
    }

    /** Bytes the data cache may hold; 0 for no cache (inputs are then read from the store for each task). */
    public long cacheCapacity() {
        return cacheCapacity;
    }

    /** Where the data cache lives; null for a temporary directory. */
    public Path cacheDir() {
        return cacheDir;
    }

    /** The cache's eviction policy: lru, lfu, fifo or random. */
    public String eviction() {
        return eviction;
    }

    /** Where relative input sources live (the shared store's mount point); null for none. */
    public Path storeRoot() {
        return storeRoot;
    }

    /**
     * Where declared outputs are saved ({@code ROOT/ID}) before a task is reported successful: the
     * directory given for outputs, else the shared store root; null when there is neither (a task
     * that declares outputs then fails, saying so).
     */
    public Path outputRoot() {
        return outputRoot != null ? outputRoot : storeRoot;
    }

    /** When a cached copy is checked against the store before a task uses it. */
    public Revalidate revalidate() {
        return revalidate;
    }

    /** A cap on the bytes per second read from the shared store: an emulation, for benchmarks; null for none. */
    public TokenBucket storeBandwidth() {
        return storeBandwidth;
    }

    /** The address peers use for this executor's cache server; null: the one the dispatcher sees. */
    public String cacheHost() {
        return cacheHost;
    }

    /** The cache server's port; 0 for any free one. */
    public int cachePort() {
        return cachePort;
    }

    /** TLS to the dispatcher, or null for plain text. */
    /** What idle time and the dispatcher's absence are measured on (the system's; tests give a fake one). */
    public Clock clock() {
        return clock;
    }

    public ExecutorConfig withClock(Clock c) {
        return toBuilder().clock(c).build();
    }

    public Tls tls() {
        return tls;
    }

    public ExecutorConfig withTls(Tls t) {
        return toBuilder().tls(t).build();
    }

    public ExecutorConfig withId(String id) {
        return toBuilder().executorId(id).build();
    }

    public ExecutorConfig withSlots(int n) {
        return toBuilder().slots(n).build();
    }

    public ExecutorConfig withNoExec(boolean b) {
        return toBuilder().noExec(b).build();
    }

    public ExecutorConfig withOutputCap(int bytes) {
        return toBuilder().outputCap(bytes).build();
    }

    public ExecutorConfig withWorkDir(Path dir) {
        return toBuilder().workDir(dir).build();
    }

    public ExecutorConfig withToken(Token t) {
        return toBuilder().token(t).build();
    }

    /** As {@link #withToken(Token)}, from its value ("": none). */
    public ExecutorConfig withToken(String t) {
        return withToken(t.isEmpty() ? Token.none() : Token.of(t));
    }

    public ExecutorConfig withRunner(SlotPool.Runner r) {
        return toBuilder().runner(r).build();
    }

    public ExecutorConfig withPrefetch(int n) {
        return toBuilder().prefetch(n).build();
    }

    public ExecutorConfig withReconnectFor(Duration d) {
        return toBuilder().reconnectFor(d).build();
    }

    public ExecutorConfig withIdleExit(Duration d) {
        return toBuilder().idleExit(d).build();
    }

    /** A data cache of {@code capacity} bytes with this eviction policy and shared store root. */
    public ExecutorConfig withCache(long capacity, String eviction, Path storeRoot) {
        return toBuilder().cacheCapacity(capacity).eviction(eviction).storeRoot(storeRoot).build();
    }

    public Builder toBuilder() {
        Builder b = new Builder(dispatcherHost, dispatcherPort);
        b.executorId = executorId;
        b.slots = slots;
        b.memoryMiB = memoryMiB;
        b.diskMiB = diskMiB;
        b.workerLimits = workerLimits;
        b.resources = resources;
        b.noExec = noExec;
        b.noExecSleep = noExecSleep;
        b.outputCap = outputCap;
        b.spoolLimit = spoolLimit;
        b.workDir = workDir;
        b.token = token;
        b.connectTimeout = connectTimeout;
        b.runner = runner;
        b.prefetch = prefetch;
        b.reconnectFor = reconnectFor;
        b.idleExit = idleExit;
        b.clock = clock;
        b.cacheCapacity = cacheCapacity;
        b.cacheDir = cacheDir;
        b.eviction = eviction;
        b.storeRoot = storeRoot;
        b.outputRoot = outputRoot;
        b.revalidate = revalidate;
        b.storeBandwidth = storeBandwidth;
        b.cacheHost = cacheHost;
        b.cachePort = cachePort;
        b.tls = tls;
        return b;
    }

    /** Builds an {@link ExecutorConfig}; starts from the defaults of {@link #of}. */
    public static final class Builder {
        private final String dispatcherHost;
        private final int dispatcherPort;
        private String executorId = Executor.defaultId();
        private int slots = Runtime.getRuntime().availableProcessors();
        private long memoryMiB = physicalMemoryMiB();
        private long diskMiB = -1;
        private io.falkon.executor.run.WorkerLimits workerLimits = io.falkon.executor.run.WorkerLimits.NONE;
        private java.util.List<io.falkon.executor.run.ResourceOffer> resources = java.util.List.of();
        private boolean noExec;
        private boolean noExecSleep;
        private int outputCap = DEFAULT_OUTPUT_CAP;
        private long spoolLimit = DEFAULT_SPOOL_LIMIT;
        private Path workDir = Path.of("").toAbsolutePath();
        private Token token = Token.none();
        private Duration connectTimeout = Duration.ofSeconds(10);
        private SlotPool.Runner runner = SlotPool.Runner.AUTO;
        private int prefetch = Prefetch.AUTO;
        private Duration reconnectFor = Duration.ofMinutes(10);
        private Duration idleExit = Duration.ZERO;
        private long cacheCapacity;
        private Path cacheDir;
        private String eviction = "lru";
        private Path storeRoot;
        private Path outputRoot;
        private Revalidate revalidate = Revalidate.STAT;
        private TokenBucket storeBandwidth;
        private String cacheHost;
        private int cachePort;
        private Tls tls;
        private Clock clock = Clock.SYSTEM;

        public Builder outputRoot(Path v) {
            outputRoot = v;
            return this;
        }

        public Builder revalidate(Revalidate v) {
            revalidate = v;
            return this;
        }

        public Builder clock(Clock v) {
            clock = v;
            return this;
        }

        public Builder tls(Tls v) {
            tls = v;
            return this;
        }

        public Builder(String dispatcherHost, int dispatcherPort) {
            this.dispatcherHost = dispatcherHost;
            this.dispatcherPort = dispatcherPort;
        }

        public Builder executorId(String v) {
            executorId = v;
            return this;
        }

        public Builder slots(int v) {
            slots = v;
            return this;
        }

        public Builder resources(java.util.List<io.falkon.executor.run.ResourceOffer> v) {
            resources = java.util.List.copyOf(v);
            return this;
        }

        public Builder workerLimits(io.falkon.executor.run.WorkerLimits v) {
            workerLimits = java.util.Objects.requireNonNull(v, "workerLimits");
            return this;
        }

        public Builder memoryMiB(long v) {
            memoryMiB = v;
            return this;
        }

        public Builder diskMiB(long v) {
            diskMiB = v;
            return this;
        }

        public Builder noExec(boolean v) {
            noExec = v;
            return this;
        }

        public Builder noExecSleep(boolean v) {
            noExecSleep = v;
            return this;
        }

        public Builder outputCap(int v) {
            outputCap = v;
            return this;
        }

        public Builder spoolLimit(long v) {
            spoolLimit = v;
            return this;
        }

        public Builder workDir(Path v) {
            workDir = v;
            return this;
        }

        public Builder token(Token v) {
            token = v;
            return this;
        }

        public Builder connectTimeout(Duration v) {
            connectTimeout = v;
            return this;
        }

        public Builder runner(SlotPool.Runner v) {
            runner = v;
            return this;
        }

        public Builder prefetch(int v) {
            prefetch = v;
            return this;
        }

        public Builder reconnectFor(Duration v) {
            reconnectFor = v;
            return this;
        }

        public Builder idleExit(Duration v) {
            idleExit = v;
            return this;
        }

        public Builder cacheCapacity(long v) {
            cacheCapacity = v;
            return this;
        }

        public Builder cacheDir(Path v) {
            cacheDir = v;
            return this;
        }

        public Builder eviction(String v) {
            eviction = v;
            return this;
        }

        public Builder storeRoot(Path v) {
            storeRoot = v;
            return this;
        }

        public Builder storeBandwidth(TokenBucket v) {
            storeBandwidth = v;
            return this;
        }

        public Builder cacheHost(String v) {
            cacheHost = v;
            return this;
        }

        public Builder cachePort(int v) {
            cachePort = v;
            return this;
        }

        public ExecutorConfig build() {
            return new ExecutorConfig(this);
        }
    }
}
