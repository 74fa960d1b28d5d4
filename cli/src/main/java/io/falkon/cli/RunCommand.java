package io.falkon.cli;

import io.falkon.client.FalkonClient;
import io.falkon.datacache.eviction.EvictionPolicies;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.dispatcher.policy.DispatchPolicies;
import io.falkon.dispatcher.policy.DispatchPolicy;
import io.falkon.transport.inprocess.InProcessTransport;
import io.falkon.transport.pipe.PipeTransport;
import io.falkon.executor.Bytes;
import io.falkon.executor.ConnectOptions;
import io.falkon.executor.ExecutorCommand;
import io.falkon.executor.LocalExecutors;
import io.falkon.protocol.auth.TokenSource;
import io.falkon.provisioner.LrmAdapter;
import io.falkon.provisioner.Provisioner;
import picocli.CommandLine.Model.CommandSpec;

import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.net.InetAddress;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code falkon run}. Its picocli model is built in code ({@link #model()}, see {@link CommandModel}):
 * a short run's start-up is what this command is measured by.
 */
final class RunCommand implements Callable<Integer> {

    int executors = 1;
    String executorImpl = "auto";
    Integer slots;
    /** -j: GNU parallel's jobs at once, here one local executor's slots. */
    Integer jobs;
    boolean noExec;
    String prefetch = "auto";
    Integer outputCap;
    /** --resource, repeatable: named resources the local executors offer (docs/cli.md "GPUs and other resources"). */
    String[] resources = new String[0];
    String policy;
    double gccThreshold = 0.9;
    String cacheSize;
    String eviction = "lru";
    Path store;
    Integer httpPort;
    boolean verbose;
    final WorkloadOptions workload = new WorkloadOptions();
    final ProvisionOptions provision = new ProvisionOptions();

    /** Slots of a no-exec executor: nothing runs, so only the pipeline's depth matters. */
    static final int NO_EXEC_SLOTS = 1000;

    /** The command line of this command, bound to its fields. */
    CommandSpec model() {
        CommandSpec spec = CommandModel.command("run", this, new Falkon.Version(), "Run a task file on this machine: "
                        + "an embedded dispatcher plus local executor processes. Exit 0 iff every task succeeded.")
                .option("executors", "--executors", "executor processes to start (default: ${DEFAULT-VALUE})")
                .option("executorImpl", "--executor=IMPL", "executor implementation: java, c (the C executor, built in "
                        + "executor-c/), or auto (default: the C executor when it is built and the work needs nothing "
                        + "only the Java one has: another eviction than lru, https:// inputs)")
                .option("slots", "--slots", "tasks each executor runs at once (default: cores; with --no-exec, where "
                        + "nothing runs, " + NO_EXEC_SLOTS + ")")
                .option("jobs", "-j, --jobs=N", "run N tasks at once on one local executor, as GNU parallel's -j "
                        + "(--executors 1 --slots N)")
                .option("noExec", "--no-exec", "BENCHMARKING ONLY: executors complete tasks without running them")
                .option("prefetch", "--prefetch=N|auto", "tasks each executor holds beyond its free slots: short "
                        + "tasks run back to back and results return in bundles (default: ${DEFAULT-VALUE}: enough per "
                        + "slot to cover a round trip once tasks are seen to be short, none for long tasks or with a "
                        + "data cache)")
                .option("outputCap", "--output-cap=BYTES", "bytes of stdout and of stderr kept per task "
                        + "(default: 65536)")
                .option("resources", "--resource=NAME=INDICES|COUNT", "a named resource the executor offers to tasks "
                        + "that ask for it, as falkon executor's: gpus=0,1 or license=4; repeatable (default: the GPUs "
                        + "found by nvidia-smi or rocm-smi, nothing else)")
                .option("policy", "--policy", "dispatch policy: first-available (fa), max-cache-hit (mch), "
                        + "max-compute-util (mcu), good-cache-compute (gcc) (default: first-available; "
                        + "good-cache-compute with --cache-size, which first-available would leave unused)")
                .option("gccThreshold", "--gcc-threshold", "good-cache-compute's utilization threshold "
                        + "(default: ${DEFAULT-VALUE})")
                .option("cacheSize", "--cache-size=BYTES", "a data cache of this size on each executor (e.g. 500m; "
                        + "default: none)")
                .option("eviction", "--eviction", "cache eviction policy: lru, lfu, fifo, random "
                        + "(default: ${DEFAULT-VALUE})")
                .option("store", "--store=DIR", "the shared store's root, for input sources given as relative paths "
                        + "(default: this directory)")
                .option("httpPort", "--http-port", "serve the live dashboard and /metrics on this port while the run "
                        + "lasts (0 picks a free one; default: off); its address, with this run's token, is printed")
                .option("verbose", "-v, --verbose", "log what the dispatcher and executors do")
                .mixin("workload", workload.model())
                .group("%nExecutors from a batch scheduler instead of this machine (see docs/provisioning.md):%n",
                        provision.model())
                .spec();
        workload.command = spec;
        return spec;
    }

    /**
     * {@code falkon run FILE} with any of {@code -q}, {@code -v}, {@code --json}, {@code --store DIR} and
     * {@code -j N} (the words after {@code run}), configured without picocli; null for any other command
     * line, which picocli parses as always.
     *
     * <p>Why: building this command's picocli model and parsing with it was about a sixth of a short
     * run's wall time (docs/benchmarks.md, "The last places a peer is faster (issue 58): a third
     * pass"; 25-37 ms in the seventh), and the commonest command lines need none of it. Every option is
     * a field whose initial value is its default ({@link CommandModel}), so what picocli would set for
     * these words is the file and these options' fields: CommandModelTest checks field by field that
     * both ways give the same command. Anything else (another option, {@code --help}, two files, a word
     * picocli would read differently, such as {@code @FILE}, an option repeated, a value that is not
     * plainly one) goes to picocli, which also words its errors.
     */
    static RunCommand plain(List<String> words) {
        RunCommand run = new RunCommand();
        for (int i = 0; i < words.size(); i++) {
            String w = words.get(i);
            int eq = w.startsWith("--") ? w.indexOf('=') : -1;
            if ((w.equals("-q") || w.equals("--quiet")) && !run.workload.quiet) {
                run.workload.quiet = true;
            } else if ((w.equals("-v") || w.equals("--verbose")) && !run.verbose) {
                run.verbose = true;
            } else if (w.equals("--json") && !run.workload.json) {
                run.workload.json = true;
            } else if (w.equals("--store") || w.equals("-j") || w.equals("--jobs")) {
                if (i + 1 == words.size() || !plainValue(run, w, words.get(++i))) {
                    return null;
                }
            } else if (eq > 0) {
                if (!plainValue(run, w.substring(0, eq), w.substring(eq + 1))) {
                    return null;
                }
            } else if (run.workload.words.isEmpty() && !w.isEmpty() && !w.startsWith("@")
                    && (w.equals("-") || !w.startsWith("-"))) {
                run.workload.words.add(w);
            } else {
                return null;
            }
        }
        return run.workload.words.isEmpty() ? null : run;
    }

    /**
     * Sets {@code --store} or {@code -j} from {@code value} as picocli would; false for another option,
     * one given before, or a value picocli is to judge (empty, like an option, {@code @FILE}, not a
     * path, not a number of at most nine digits).
     */
    private static boolean plainValue(RunCommand run, String option, String value) {
        if (value.isEmpty() || value.startsWith("-") || value.startsWith("@")) {
            return false;
        }
        if (option.equals("--store") && run.store == null) {
            try {
                run.store = Path.of(value);
            } catch (InvalidPathException e) {
                return false;
            }
            return true;
        }
        if ((option.equals("-j") || option.equals("--jobs")) && run.jobs == null && value.length() <= 9) {
            for (int i = 0; i < value.length(); i++) {
                if (value.charAt(i) < '0' || value.charAt(i) > '9') {
                    return false;
                }
            }
            run.jobs = Integer.valueOf(value);
            return true;
        }
        return false;
    }

    @Override
    public Integer call() throws Exception {
        Logging.level(verbose ? "INFO" : "WARN");
        if (jobs != null) {
            if (slots != null || executors != 1 || provision.enabled()) {
                throw new Falkon.UserError("-j " + jobs + " runs that many tasks at once on one local executor: not "
                        + "with " + (slots != null ? "--slots (give one of the two)" : executors != 1 ? "--executors"
                        : "--provisioner (give --slots per node)"));
            }
            if (jobs < 1) {
                throw new Falkon.UserError("-j must be at least 1, got " + jobs);
            }
            slots = jobs;
        }
        if (slots == null) {
            slots = noExec ? NO_EXEC_SLOTS : Runtime.getRuntime().availableProcessors();
        }
        if (executors < 1) {
            throw new Falkon.UserError("--executors must be at least 1, got " + executors);
        }
        if (slots < 1) {
            throw new Falkon.UserError("--slots must be at least 1, got " + slots);
        }
        try {
            ExecutorCommand.parsePrefetch(prefetch);
        } catch (IllegalArgumentException e) {
            throw new Falkon.UserError(e.getMessage());
        }
        // the instance to rerun from (if any) is on a running dispatcher, reached as by falkon submit
        workload.storeRoot = (store == null ? Path.of("") : store).toAbsolutePath();
        StartupTrace.mark("run: options");
        long total = workload.validate(new ConnectOptions());
        StartupTrace.mark("run: task file read and checked");
        if (workload.nothingToRerun(total)) {
            return 0;
        }
        workload.haltPolicy(total); // a bad --halt is refused before anything starts
        if (workload.dryRun) {
            return workload.printDryRun();
        }
        DispatchPolicy chosen;
        LocalExecutors.Impl impl;
        try {
            impl = executorImpl.equalsIgnoreCase("auto") ? autoImpl() : LocalExecutors.Impl.parse(executorImpl);
            if (impl == LocalExecutors.Impl.C && !eviction.equalsIgnoreCase("lru")) {
                throw new IllegalArgumentException("--eviction " + eviction + ": the C executor evicts in LRU order "
                        + "only (lfu, fifo and random are in the Java executor)");
            }
            chosen = DispatchPolicies.byName(policy != null ? policy
                    : cacheSize != null ? "good-cache-compute" : "first-available", gccThreshold);
            if (cacheSize != null) {
                Bytes.parse(cacheSize);
            }
            EvictionPolicies.byName(eviction);
        } catch (IllegalArgumentException e) {
            throw new Falkon.UserError(e.getMessage());
        }
        if (impl == LocalExecutors.Impl.C) {
            try {
                LocalExecutors.cExecutable();
            } catch (IOException e) {
                throw new Falkon.UserError(e.getMessage());
            }
        }
        if (provision.enabled()) {
            return runProvisioned(chosen, total, impl);
        }
        DispatcherConfig config = DispatcherConfig.local().withPolicy(chosen).withHttp(httpPortOrOff());
        List<String> extra = new ArrayList<>(List.of("--prefetch", prefetch));
        if (outputCap != null) {
            extra.addAll(List.of("--output-cap", Integer.toString(outputCap)));
        }
        extra.addAll(List.of("--store", (store == null ? Path.of("") : store).toAbsolutePath()
                .toString(), "--eviction", eviction));
        if (cacheSize != null) {
            extra.addAll(List.of("--cache-size", cacheSize, "--cache-host", "127.0.0.1"));
        }
        for (String r : resources) {
            extra.addAll(List.of("--resource", r));
        }
        String idPrefix = "local-" + ProcessHandle.current().pid();
        Dispatcher dispatcher;
        LocalExecutors local = null;
        if (impl == LocalExecutors.Impl.C) {
            // The C executors speak the protocol on their standard input and output: nothing listens, no
            // Netty on the way to the first task, and they start (and say HELLO into the pipe) while the
            // dispatcher starts. The Java executor dials TCP.
            local = LocalExecutors.start(impl, executors, slots, noExec, LocalExecutors.STDIO, config.token(),
                    idPrefix, extra);
            PipeTransport.prepare();
            try {
                dispatcher = Dispatcher.start(config.withPort(-1));
            } catch (RuntimeException e) {
                local.close();
                throw e;
            }
        } else {
            dispatcher = Dispatcher.start(config);
        }
        try {
            if (local != null) {
                attachPipes(dispatcher, local);
            }
            announceDashboard(dispatcher);
            StartupTrace.mark("run: dispatcher started");
            if (local == null) {
                local = LocalExecutors.start(impl, executors, slots, noExec, "127.0.0.1:" + dispatcher.port(),
                        dispatcher.token(), idPrefix, extra);
            }
            StartupTrace.mark("run: executors started");
            if (executors > 1) {
                awaitAllRegistered(dispatcher, local);
                StartupTrace.mark("run: executors registered");
            }
            // the tasks go in while the executor starts and registers (several: once they have); the
            // run stops if they all exit
            try (FalkonClient client = inProcessClient(dispatcher);
                 TaskFile file = workload.open()) {
                Workload run = new Workload().stoppingWhen(executorsLost(dispatcher, local));
                int exit = workload.report(run.run(client::createInstance, file, total, workload));
                StartupTrace.mark("run: tasks done, summary printed");
                return exit;
            }
        } finally {
            // closing the dispatcher closes the executors' connections, which makes them exit
            if (local != null) {
                local.leaving();
            }
            dispatcher.close();
            StartupTrace.mark("run: dispatcher closed");
            if (local != null) {
                local.close();
            }
            StartupTrace.mark("run: executors gone");
        }
    }

    /** The C executors' pipes, one connection each, in front of the dispatcher's admission stage. */
    private static void attachPipes(Dispatcher dispatcher, LocalExecutors local) {
        PipeTransport pipes = dispatcher.add(admission -> new PipeTransport(admission, new PipeTransport.Settings(
                dispatcher.id(), dispatcher.config().maxFrameLength(), HANDSHAKE_MILLIS)));
        List<Process> children = local.processes();
        for (int i = 0; i < children.size(); i++) {
            Process p = children.get(i);
            pipes.attach("local executor " + i + " (pid " + p.pid() + ")", p.getInputStream(), p.getOutputStream());
        }
    }

    /**
     * The faster executor that can do the work: the C executor when it is built (no JVM to start, the
     * same throughput; docs/benchmarks.md), unless the work needs the Java executor's extras.
     */
    private LocalExecutors.Impl autoImpl() {
        if (!eviction.equalsIgnoreCase("lru") || workload.httpsInputs) {
            return LocalExecutors.Impl.JAVA;
        }
        return LocalExecutors.Impl.fastest();
    }

    /**
     * The queue-driven variant: no executors at first; the provisioner gets them from the scheduler
     * as tasks queue up and gives them back when idle. The dispatcher listens on all interfaces so
     * that executors on other nodes can reach it; they are told this host's name.
     */
    private int runProvisioned(DispatchPolicy chosen, long total, LocalExecutors.Impl impl) throws Exception {
        LrmAdapter adapter = provision.adapter();
        Dispatcher dispatcher = Dispatcher.start(DispatcherConfig.defaults().withPort(0).withPolicy(chosen)
                .withHttp(httpPortOrOff()));
        announceDashboard(dispatcher);
        String host = provision.lrm.equals("local") ? "127.0.0.1" : InetAddress.getLocalHost().getHostName();
        List<String> cmd = new ArrayList<>(LocalExecutors.command(impl));
        cmd.addAll(List.of("--dispatcher", host + ":" + dispatcher.port(), "--prefetch", prefetch));
        if (noExec) {
            cmd.add("--no-exec");
        }
        Path work = TokenSource.system().home().resolve("jobs");
        try (Provisioner p = Provisioner.start(provision.config(slots, cmd, work, dispatcher.token()),
                adapter, dispatcher::status)) {
            dispatcher.statusSection("provisioner", p::statusJson);
            System.err.println("falkon run: dispatcher at " + host + ":" + dispatcher.port() + "; executors come from "
                    + adapter.name() + " (falkon status --dispatcher " + host + ":" + dispatcher.port()
                    + " shows the allocations)");
            try (FalkonClient client = inProcessClient(dispatcher);
                 TaskFile file = workload.open()) {
                return workload.report(new Workload().run(client::createInstance, file, total, workload));
            }
        } finally {
            dispatcher.close(); // the executors' connections close and they leave; their jobs end
            if (adapter instanceof AutoCloseable c) {
                c.close();
            }
        }
    }

    /**
     * The run's own client, connected to its dispatcher without a socket: no encoding, loopback
     * writes or I/O threads between them (docs/benchmarks.md). Executors still connect over TCP.
     */
    private FalkonClient inProcessClient(Dispatcher dispatcher) {
        InProcessTransport inProcess = dispatcher.add(admission -> new InProcessTransport(admission,
                dispatcher.config().maxFrameLength()));
        return FalkonClient.over(inProcess.connect(), workload.clientOptions(dispatcher.token()));
    }

    private int httpPortOrOff() {
        return httpPort == null ? -1 : httpPort;
    }

    /** The dashboard's address with this run's token (a fresh one that dies with the run), on standard error. */
    private static void announceDashboard(Dispatcher dispatcher) {
        if (dispatcher.httpUrl() != null) {
            System.err.println("falkon run: dashboard at " + dispatcher.httpUrl() + "?token="
                    + URLEncoder.encode(dispatcher.token().value(), StandardCharsets.UTF_8));
        }
    }

    /**
     * Waits for every executor of several to register, so that the first tasks spread over them: with
     * one registered it would take them all, and a data-aware policy could not then place the tasks
     * that read their outputs where those are (a workflow's second stage read them from a peer).
     */
    private void awaitAllRegistered(Dispatcher dispatcher, LocalExecutors local) throws InterruptedException {
        try {
            CompletableFuture.anyOf(dispatcher.whenExecutors(executors), local.died()).get(REGISTER_SECONDS,
                    TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new Falkon.UserError(e.getCause().getMessage());
        } catch (TimeoutException e) {
            throw new Falkon.UserError(executors + " local executors did not register within " + REGISTER_SECONDS
                    + " s");
        }
    }

    /**
     * Fails when the run cannot go on: every local executor has exited, or none has registered in
     * {@link #REGISTER_SECONDS} (one that exits while others work is replaced by them: the dispatcher
     * retries its tasks).
     */
    private static CompletableFuture<Void> executorsLost(Dispatcher dispatcher, LocalExecutors local) {
        CompletableFuture<Void> lost = new CompletableFuture<>();
        local.allGone().whenComplete((ok, e) -> {
            if (e != null) {
                lost.completeExceptionally(e);
            }
        });
        dispatcher.whenExecutors(1).orTimeout(REGISTER_SECONDS, TimeUnit.SECONDS).whenComplete((ok, e) -> {
            if (e instanceof TimeoutException) {
                lost.completeExceptionally(new IllegalStateException("no local executor registered within "
                        + REGISTER_SECONDS + " s"));
            }
        });
        return lost;
    }

    private static final int REGISTER_SECONDS = 120;
    /** A local executor that has not said HELLO by then is closed. */
    private static final long HANDSHAKE_MILLIS = 10_000;
}
