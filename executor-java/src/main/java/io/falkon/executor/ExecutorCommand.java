package io.falkon.executor;

import io.falkon.datacache.Revalidate;
import io.falkon.datacache.eviction.EvictionPolicies;
import io.falkon.executor.run.SlotPool;
import io.falkon.executor.run.WorkerLimits;
import io.falkon.protocol.HostPort;
import io.falkon.protocol.auth.TokenSource;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * {@code falkon executor}: also the whole command line of the standalone
 * {@code falkon-executor.jar} ({@link #main}), which is what compute nodes need.
 */
@Command(name = "executor", mixinStandardHelpOptions = true,
        description = "Run an executor: it dials the dispatcher and runs the tasks it is sent.")
public final class ExecutorCommand implements Callable<Integer> {

    @Option(names = "--dispatcher", required = true, paramLabel = "HOST:PORT", description = "the dispatcher")
    String dispatcher;

    @Option(names = "--slots", description = "tasks run at once (default: cores)")
    int slots = Runtime.getRuntime().availableProcessors();

    @Option(names = "--memory", paramLabel = "SIZE", description = "memory offered to tasks that state theirs, "
            + "e.g. 8g or 4096m (default: the node's physical memory)")
    String memory;

    @Option(names = "--resource", paramLabel = "NAME=INDICES|COUNT", description = "a named resource offered to "
            + "tasks that ask for it: devices (gpus=0,1,2,3; one device: gpus=[0]) or a count (license=4); "
            + "repeatable. GPUs are found by themselves (nvidia-smi, rocm-smi, an inherited CUDA_VISIBLE_DEVICES or "
            + "ROCR_VISIBLE_DEVICES) unless gpus=... is given; gpus=0 offers none")
    List<String> resources = new ArrayList<>();

    @Option(names = "--disk", paramLabel = "SIZE", description = "scratch space offered to tasks that state theirs, "
            + "e.g. 100g (default: the free space of --workdir's file system when it registers)")
    String disk;

    @Option(names = "--worker-max-tasks", paramLabel = "N", description = "replace a persistent worker after it "
            + "has run N tasks (default: 0 = never)")
    int workerMaxTasks;

    @Option(names = "--worker-max-memory", paramLabel = "SIZE", description = "replace a persistent worker whose "
            + "resident memory is over SIZE after a task, e.g. 2g (default: no bound)")
    String workerMaxMemory;

    @Option(names = "--no-exec", description = "BENCHMARKING ONLY: complete tasks without running them, "
            + "to measure dispatch overhead")
    boolean noExec;

    @Option(names = "--no-exec-sleep", description = "BENCHMARKING ONLY, with --no-exec: hold a task `sleep S` "
            + "S seconds on a timer before completing it, to emulate task length without a process")
    boolean noExecSleep;

    @Option(names = "--emulate", paramLabel = "N", description = "BENCHMARKING ONLY, with --no-exec: run N "
            + "executors in this process (ids ID-0 ...), each with its own connection, sharing --io-threads event "
            + "loops; how one machine stands in for thousands of executors (default: 1)")
    int emulate = 1;

    @Option(names = "--io-threads", description = "event loop threads shared by the --emulate executors "
            + "(default: cores)")
    int ioThreads = Runtime.getRuntime().availableProcessors();

    @Option(names = "--idle-exit", paramLabel = "SECONDS", description = "leave after holding no task for this "
            + "long (the provisioner's distributed release; default: 0 = never)")
    double idleExitSeconds;

    @Option(names = "--id", description = "executor id, unique per dispatcher (default: host-pid-n)")
    String id;

    @Option(names = "--output-cap", paramLabel = "BYTES",
            description = "bytes of stdout and of stderr kept per task (default: ${DEFAULT-VALUE})")
    int outputCap = ExecutorConfig.DEFAULT_OUTPUT_CAP;

    @Option(names = "--workdir", description = "working directory for tasks that do not set one (default: here)")
    Path workDir = Path.of("").toAbsolutePath();

    @Mixin
    ConnectOptions connect = new ConnectOptions();

    @Option(names = "--prefetch", paramLabel = "N|auto", description = "tasks to hold beyond the free slots, so "
            + "that short tasks run back to back and results go back in bundles; auto (the default): about 40 ms of "
            + "work per slot (up to 64) once tasks are seen to be short, none while they are long or with a data cache; "
            + "0: a task is sent only to a free slot")
    String prefetch = "auto";

    @Option(names = "--reconnect-for", paramLabel = "SECONDS", description = "after losing the dispatcher, keep "
            + "dialling with back-off this long, then exit (default: ${DEFAULT-VALUE}; 0 = exit at once)")
    long reconnectForSeconds = 600;

    @Option(names = "--cache-size", paramLabel = "BYTES", description = "data cache capacity, e.g. 4g or 500m "
            + "(default: none: inputs are read from the shared store for every task)")
    String cacheSize;

    @Option(names = "--cache-dir", description = "where the data cache lives (default: a temporary directory)")
    Path cacheDir;

    @Option(names = "--eviction", description = "cache eviction policy: lru, lfu, fifo, random (default: ${DEFAULT-VALUE})")
    String eviction = "lru";

    @Option(names = "--store", paramLabel = "DIR", description = "the shared store's root, for input sources given "
            + "as relative paths (e.g. a shared file system mount)")
    Path store;

    @Option(names = "--output-dir", paramLabel = "DIR", description = "where declared outputs are saved, as DIR/ID, "
            + "before their task is reported successful (default: the --store root)")
    Path outputDir;

    @Option(names = "--revalidate", description = "check a cached copy against its store file before each use: "
            + "stat (size and modification time, default) or never (ids are immutable)")
    String revalidate = "stat";

    @Option(names = "--cache-port", description = "port of the cache server peers fetch from (default: any free one)")
    int cachePort;

    @Option(names = "--cache-host", description = "the address peers should use for this node's cache server "
            + "(default: the address the dispatcher sees)")
    String cacheHost;

    @Option(names = "--runner", description = "how to start processes: AUTO (posix_spawn where available), POSIX "
            + "or JDK (java.lang.ProcessBuilder) (default: ${DEFAULT-VALUE})")
    SlotPool.Runner runner = SlotPool.Runner.AUTO;

    @Option(names = "--pin-slots", paramLabel = "auto|on|off", description = "C executor only (--impl c): keep "
            + "each slot's thread on one CPU, tasks still get every CPU (default there: auto, on with one slot per "
            + "CPU; the JVM cannot pin its threads)")
    String pinSlots;

    @Option(names = "--impl", paramLabel = "IMPL", description = "java, or c: run the C executor (built in "
            + "executor-c/) with these same options instead (default: ${DEFAULT-VALUE})")
    String impl = "java";

    @Spec
    CommandSpec spec;

    /** The standalone executor: {@code java -jar falkon-executor.jar --dispatcher HOST:PORT ...}. */
    public static void main(String[] args) {
        LogConfigurator.forFalkonPrograms();
        Executor.preferFastSpawn();
        System.exit(new CommandLine(new ExecutorCommand()).setCommandName("falkon-executor").execute(args));
    }

    @Override
    public Integer call() {
        try {
            if (LocalExecutors.Impl.parse(impl) == LocalExecutors.Impl.C) {
                return runC();
            }
            if (pinSlots != null) {
                throw new IllegalArgumentException("--pin-slots is an option of the C executor only (--impl c): "
                        + "the JVM cannot keep a thread on one CPU");
            }
        } catch (IllegalArgumentException | IOException e) {
            System.err.println("falkon executor: " + e.getMessage());
            return 2;
        }
        HostPort hp;
        try {
            hp = HostPort.parse(dispatcher);
        } catch (IllegalArgumentException e) {
            System.err.println("falkon executor: " + e.getMessage());
            return 2;
        }
        TokenSource.Found token;
        try {
            token = connect.token();
            if (!token.token().required() && reconnectForSeconds > 0) {
                // no token anywhere yet: a dispatcher starting beside us may be about to write one
                if (!AwaitDispatcher.listening(hp, Duration.ofSeconds(reconnectForSeconds))) {
                    System.err.println("falkon executor: cannot connect to dispatcher at " + hp + " within "
                            + reconnectForSeconds + " s");
                    return 2;
                }
                token = connect.token();
            }
        } catch (IllegalArgumentException e) {
            System.err.println("falkon executor: " + e.getMessage());
            return 2;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        }
        ExecutorConfig cfg;
        try {
            cfg = ExecutorConfig.of(hp.host(), hp.port()).withSlots(slots).withNoExec(noExec)
                    .withOutputCap(outputCap).withWorkDir(workDir).withToken(token.token())
                    .withTls(connect.tls()).withRunner(runner).withPrefetch(parsePrefetch(prefetch))
                    .withReconnectFor(Duration.ofSeconds(reconnectForSeconds))
                    .withIdleExit(Duration.ofMillis(Math.round(Math.max(0, idleExitSeconds) * 1000)));
        } catch (IllegalArgumentException e) {
            System.err.println("falkon executor: " + e.getMessage());
            return 2;
        }
        if (id != null) {
            cfg = cfg.withId(id);
        }
        try {
            ExecutorConfig.Builder b = cfg.toBuilder().eviction(eviction).storeRoot(store).cacheDir(cacheDir)
                    .cachePort(cachePort).cacheHost(cacheHost).outputRoot(outputDir).noExecSleep(noExecSleep)
                    .revalidate(Revalidate.parse(revalidate));
            if (cacheSize != null) {
                b.cacheCapacity(Bytes.parse(cacheSize));
            }
            b.workerLimits(new WorkerLimits(workerMaxTasks,
                    workerMaxMemory == null ? 0 : Math.max(1, Bytes.parse(workerMaxMemory) >> 20)));
            if (memory != null) {
                long bytes = Bytes.parse(memory);
                if (bytes < 1 << 20) {
                    throw new IllegalArgumentException("--memory must be at least 1m, got '" + memory + "'");
                }
                b.memoryMiB(bytes >> 20);
            }
            if (disk != null) {
                long bytes = Bytes.parse(disk);
                if (bytes < 1 << 20) {
                    throw new IllegalArgumentException("--disk must be at least 1m, got '" + disk + "'");
                }
                b.diskMiB(bytes >> 20);
            }
            List<io.falkon.executor.run.ResourceOffer> offers = new ArrayList<>();
            for (String r : resources) {
                io.falkon.executor.run.ResourceOffer o = io.falkon.executor.run.ResourceOffer.parse(r);
                if (offers.stream().anyMatch(x -> x.name().equals(o.name()))) {
                    throw new IllegalArgumentException("--resource " + o.name() + " is given twice");
                }
                offers.add(o);
            }
            b.resources(offers);
            EvictionPolicies.byName(eviction);
            cfg = b.build();
        } catch (IllegalArgumentException e) {
            System.err.println("falkon executor: " + e.getMessage());
            return 2;
        }
        if (emulate != 1) {
            return emulate(cfg);
        }
        Executor ex;
        try {
            ex = Executor.start(cfg);
        } catch (IllegalStateException | IllegalArgumentException e) {
            System.err.println("falkon executor: " + e.getMessage());
            return 2;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(ex::close, "falkon-shutdown"));
        ex.terminated().join();
        ex.close();
        return 0;
    }

    /** {@code --emulate N}: N no-exec executors on shared event loops, until the dispatcher goes. */
    private int emulate(ExecutorConfig cfg) {
        if (emulate < 1 || !noExec || ioThreads < 1) {
            System.err.println("falkon executor: --emulate needs N >= 1 and --no-exec (got --emulate " + emulate
                    + (noExec ? "" : ", no --no-exec") + ", --io-threads " + ioThreads + ")");
            return 2;
        }
        EventLoopGroup loops = new MultiThreadIoEventLoopGroup(ioThreads,
                new DefaultThreadFactory("falkon-emulated", true), NioIoHandler.newFactory());
        List<Executor> started = new ArrayList<>(emulate);
        Runnable closeAll = () -> {
            started.forEach(Executor::close);
            loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        };
        String prefix = id != null ? id : Executor.defaultId();
        try {
            for (int i = 0; i < emulate; i++) {
                started.add(Executor.start(cfg.withId(prefix + "-" + i), loops.next()));
            }
        } catch (IllegalStateException | IllegalArgumentException e) {
            System.err.println("falkon executor: emulated executor " + started.size() + ": " + e.getMessage());
            closeAll.run();
            return 2;
        }
        System.err.printf("falkon executor: %d emulated no-exec executors registered with %s%n", emulate, dispatcher);
        Runtime.getRuntime().addShutdownHook(new Thread(closeAll, "falkon-shutdown"));
        // they all lose the dispatcher together; wait for every one
        started.forEach(e -> e.terminated().join());
        closeAll.run();
        return 0;
    }

    /**
     * Runs the C executor with this command's options (less --impl) and returns its exit status. The
     * options are taken from what this command matched, not from the raw command line: under
     * {@code falkon executor} that also holds the word "executor".
     */
    private int runC() throws IOException {
        List<String> args = new ArrayList<>(LocalExecutors.cCommand().subList(0, 1));
        for (OptionSpec o : spec.commandLine().getParseResult().matchedOptions()) {
            String name = o.longestName();
            if (name.equals("--impl")) {
                continue;
            }
            if (name.equals("--runner")) {
                throw new IllegalArgumentException("--runner is an option of the Java executor only "
                        + "(the C executor always uses vfork + exec)");
            }
            if (o.arity().max() == 0) {
                args.add(name);
            } else {
                for (String v : o.originalStringValues()) {
                    args.add(name);
                    args.add(v);
                }
            }
        }
        ProcessBuilder pb = new ProcessBuilder(args).inheritIO();
        // the C executor dies with this JVM, SIGKILL included (bin/falkon execs it directly instead)
        pb.environment().put("FALKON_PARENT_PID", Long.toString(ProcessHandle.current().pid()));
        Process p = pb.start();
        Thread stop = new Thread(() -> {
            p.destroy(); // SIGTERM: the C executor kills its tasks and cleans up
            try {
                p.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "falkon-c-executor-stop");
        Runtime.getRuntime().addShutdownHook(stop);
        try {
            return p.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        }
    }

    /** {@code auto} or a whole number of tasks. */
    public static int parsePrefetch(String value) {
        if (value.equalsIgnoreCase("auto")) {
            return Prefetch.AUTO;
        }
        try {
            int n = Integer.parseInt(value);
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException("--prefetch must be auto or a whole number of tasks, got '" + value + "'");
    }
}
