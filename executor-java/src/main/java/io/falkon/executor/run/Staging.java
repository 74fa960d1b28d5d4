package io.falkon.executor.run;

import io.falkon.datacache.CacheStore;
import io.falkon.datacache.Copy;
import io.falkon.datacache.FetchException;
import io.falkon.datacache.Lease;
import io.falkon.datacache.fetch.ObjectRef;
import io.falkon.datacache.OutputArchive;
import io.falkon.datacache.OutputFile;
import io.falkon.datacache.OutputStore;
import io.falkon.datacache.fetch.PermanentFetchException;
import io.falkon.datacache.Source;
import io.falkon.datacache.fetch.StoreFetcher;
import io.falkon.datacache.fetch.Unpacker;
import io.falkon.protocol.DataCodec;
import io.falkon.protocol.DataStats;
import io.falkon.protocol.Execution;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.ExtTags;
import io.falkon.protocol.TaskInput;
import io.falkon.protocol.TaskOutput;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskStatus;
import io.falkon.protocol.fs.OwnerOnly;
import io.falkon.protocol.time.Clock;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Data diffusion around one task: before it runs, its inputs are fetched (from the cache, a peer or
 * the shared store) and copied into a fresh sandbox directory, which becomes its working directory
 * unless it names one; after it exits 0, its declared outputs are saved to the output store (and
 * kept in the cache), and only then is it reported successful. The task sees:
 * <ul>
 *   <li>each input as {@code NAME} in the sandbox: its own copy of the cached file or unpacked
 *       directory, which it may change or delete without touching what other tasks and peers read
 *       (NAME is the input's name, else the last part of its id);</li>
 *   <li>{@code FALKON_INPUT_DIR} = the sandbox, {@code FALKON_INPUT_0}, {@code FALKON_INPUT_1}, ... =
 *       the inputs' paths in order, {@code FALKON_INPUTS} = all of them separated by colons.</li>
 * </ul>
 * A task's inputs are staged concurrently, up to {@link #CONCURRENT_FETCHES} at a time (seed 004:
 * staging a gather task's inputs one after another made it several times slower), each still
 * verified on arrival by the cache or the copy.
 * Without a cache (or when the dispatcher says to bypass it) inputs are copied from the shared
 * store into the sandbox for this task alone. A failure to fetch that would recur anywhere is
 * flagged permanent (not retried); a declared output that is missing or cannot be saved makes the
 * result {@link TaskStatus#OUTPUT_FAILED}.
 */
public final class Staging {
    private static final Logger log = LoggerFactory.getLogger(Staging.class);
    /** How many inputs of one task are fetched at once (the C executor's FK_CONCURRENT_FETCHES too). */
    public static final int CONCURRENT_FETCHES = 4;
    /**
     * Threads that help a task's own thread fetch its inputs: made on demand, gone when idle, so
     * their number follows the slots staging at once (at most three helpers each).
     */
    private static final ExecutorService HELPERS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "falkon-fetch");
        t.setDaemon(true);
        return t;
    });
    private final CacheStore cache;
    private final StoreFetcher store;
    private final OutputStore outputs;
    /** Where outputs marked archived go (null when outputs have nowhere to go). */
    private final OutputArchive archive;
    private final Path sandboxes;
    private final AtomicLong seq = new AtomicLong();

    /**
     * @param cache   null for an executor without a cache
     * @param outputs where declared outputs are saved; null when the executor has nowhere to save them
     */
    public Staging(CacheStore cache, StoreFetcher store, OutputStore outputs, OutputArchive archive, Path sandboxes)
            throws IOException {
        this.cache = cache;
        this.store = store;
        this.outputs = outputs;
        this.archive = archive;
        this.sandboxes = OwnerOnly.directories(sandboxes);
    }

    static boolean needed(TaskSpec spec) {
        for (ExtField f : spec.ext()) {
            if (f.tag() == ExtTags.INPUTS || f.tag() == ExtTags.OUTPUTS) {
                return true;
            }
        }
        return false;
    }

    /** Where the inputs of one task came from: local, peer, store hits; their bytes; copies refetched. */
    private static final class Counts {
        final long[] hits = new long[3];
        final long[] bytes = new long[3];
        long refetched;
        long written;

        synchronized void add(int source, long n, boolean wasRefetched) {
            hits[source]++;
            bytes[source] += n;
            refetched += wasRefetched ? 1 : 0;
        }

        synchronized void wrote(long n) {
            written += n;
        }

        synchronized DataStats stats() {
            return new DataStats(hits[0], hits[1], hits[2], bytes[0], bytes[1], bytes[2], refetched, written);
        }
    }

    /** Stages, runs with {@code runner}, saves outputs, cleans up; the result carries DATA_STATS. */
    Execution run(Job job, TaskRunner runner) {
        Ran ran = begin(job, runner);
        return ran.done() ? ran.result() : finish(ran);
    }

    /**
     * A task {@link #begin} ran, whose outputs are still in its sandbox; or a task that is done
     * already ({@link #done()}: it could not be staged), with its {@link #result()}.
     */
    static final class Ran {
        private final Execution result;
        private final Sandbox box;
        private final TaskSpec spec;
        private final TaskSpec staged;
        private final Job job;
        private final Counts counts;

        private Ran(Execution result, Sandbox box, TaskSpec spec, TaskSpec staged, Job job, Counts counts) {
            this.result = result;
            this.box = box;
            this.spec = spec;
            this.staged = staged;
            this.job = job;
            this.counts = counts;
        }

        private static Ran done(Execution result) {
            return new Ran(result, null, null, null, null, null);
        }

        /** Whether nothing is left to do: the task could not be staged, and {@link #result()} says why. */
        boolean done() {
            return box == null;
        }

        /** The result of a task that is {@link #done()}; else what its process did, outputs not yet saved. */
        Execution result() {
            return result;
        }
    }

    /**
     * The first half of {@link #run}: stages the inputs into a fresh sandbox and runs the task.
     * Its process has exited when this returns; its outputs are saved by {@link #finish}, which the
     * slot may leave to another thread so as to take its next task meanwhile.
     */
    Ran begin(Job job, TaskRunner runner) {
        TaskSpec spec = job.spec();
        List<TaskInput> inputs = spec.inputs();
        Counts counts = new Counts();
        String clash = DataCodec.stagingClash(inputs);
        if (clash != null) { // the dispatcher refuses such a task; a spec from elsewhere is checked here too
            return Ran.done(Execution.of(TaskStatus.FETCH_FAILED, Execution.PERMANENT, clash,
                    Clock.SYSTEM.nowMicros()));
        }
        Sandbox box = new Sandbox(sandboxes.resolve("task-" + job.taskId() + "-" + seq.incrementAndGet()));
        try {
            box.create();
            Path sandbox = box.dir();
            List<String> paths = new ArrayList<>();
            for (TaskInput in : inputs) {
                paths.add(sandbox.resolve(in.fileName()).toString());
            }
            Map<String, Lease> gathered = gather(inputs, job);
            try {
                stageAll(inputs, paths, job, counts, gathered);
            } finally {
                gathered.values().forEach(Lease::close); // arrivals no input used (a failure stopped staging)
            }
            TaskSpec.Builder b = spec.toBuilder();
            if (spec.workDir().isEmpty()) {
                b.workDir(sandbox.toString());
            }
            b.env("FALKON_INPUT_DIR", sandbox.toString());
            for (int i = 0; i < paths.size(); i++) {
                b.env("FALKON_INPUT_" + i, paths.get(i));
            }
            b.env("FALKON_INPUTS", String.join(":", paths));
            TaskSpec staged = b.build();
            Execution x = runner.run(job.taskId(), staged);
            return new Ran(x, box, spec, staged, job, counts);
        } catch (FetchException e) {
            box.close();
            return Ran.done(Execution.of(TaskStatus.FETCH_FAILED, e.permanent() ? Execution.PERMANENT : 0,
                    e.getMessage(), Clock.SYSTEM.nowMicros()));
        } catch (IOException e) {
            box.close();
            return Ran.done(Execution.of(TaskStatus.FETCH_FAILED, e instanceof PermanentFetchException
                    ? Execution.PERMANENT : 0, e.getMessage(), Clock.SYSTEM.nowMicros()));
        } catch (RuntimeException | Error e) {
            box.close();
            throw e;
        }
    }

    /**
     * The second half of {@link #run}, on any thread: saves the outputs of a task that succeeded,
     * removes its sandbox and gives its result, which carries DATA_STATS. The result still means
     * what it always did: a success's outputs are saved.
     */
    Execution finish(Ran ran) {
        try (Sandbox box = ran.box) {
            Execution x = ran.result;
            Counts counts = ran.counts;
            List<String> held = new ArrayList<>();
            List<DataCodec.ArchivedOutput> archived = new ArrayList<>();
            String outputProblem = x.succeeded()
                    ? save(box, ran.staged, ran.spec.outputs(), ran.job.bypass(), counts, held, archived) : null;
            List<ExtField> ext = new ArrayList<>(x.ext());
            ext.add(new ExtField(ExtTags.DATA_STATS, DataCodec.encodeStats(counts.stats())));
            if (!held.isEmpty()) {
                if (outputProblem != null) {
                    cache.release(held); // the task failed: nothing will read them
                } else {
                    ext.add(new ExtField(ExtTags.HELD, DataCodec.encodeHeld(held)));
                }
            }
            if (!archived.isEmpty()) {
                ext.add(new ExtField(ExtTags.ARCHIVED, DataCodec.encodeArchived(archived)));
            }
            if (outputProblem == null) {
                return new Execution(x.status(), x.exitCode(), x.flags(), x.startedMicros(), x.finishedMicros(),
                        x.stdout(), x.stderr(), x.detail(), ext);
            }
            return new Execution(TaskStatus.OUTPUT_FAILED, x.exitCode(), x.flags(), x.startedMicros(),
                    x.finishedMicros(), x.stdout(), x.stderr(), outputProblem, ext);
        }
    }

    /**
     * Stages every input: this thread and up to {@link #CONCURRENT_FETCHES} - 1 helpers each take
     * the next input not yet taken. After the first failure no new input is started; the failure
     * is thrown once every fetch under way has ended (none writes into a sandbox being removed).
     */
    private void stageAll(List<TaskInput> inputs, List<String> paths, Job job, Counts counts,
                          Map<String, Lease> gathered) throws FetchException, IOException {
        int n = inputs.size();
        AtomicInteger next = new AtomicInteger();
        AtomicReference<Exception> failure = new AtomicReference<>();
        Runnable worker = () -> {
            int i;
            while (failure.get() == null && (i = next.getAndIncrement()) < n) {
                try {
                    stage(inputs.get(i), job, Path.of(paths.get(i)), counts, gathered);
                } catch (FetchException | IOException | RuntimeException e) {
                    failure.compareAndSet(null, e);
                }
            }
        };
        int helpers = Math.min(n, CONCURRENT_FETCHES) - 1;
        List<Future<?>> started = new ArrayList<>(Math.max(helpers, 0));
        for (int h = 0; h < helpers; h++) {
            started.add(HELPERS.submit(worker));
        }
        worker.run();
        for (Future<?> f : started) {
            try {
                f.get();
            } catch (ExecutionException e) {
                failure.compareAndSet(null, new IOException(e.getCause()));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failure.compareAndSet(null, new IOException("interrupted while staging the inputs"));
            }
        }
        Exception e = failure.get();
        if (e instanceof FetchException fe) {
            throw fe;
        } else if (e instanceof IOException io) {
            throw io;
        } else if (e instanceof RuntimeException re) {
            throw re;
        }
    }

    /**
     * Seed 004's collective gather: the task's inputs (as stored) that the hints place on the same
     * peer, two or more of them, come from that peer in one request ({@link CacheStore#gather});
     * several peers are asked at once. Returns what arrived, pinned, by cache key.
     */
    private Map<String, Lease> gather(List<TaskInput> inputs, Job job) {
        Map<String, Lease> arrived = new ConcurrentHashMap<>();
        if (cache == null || job.bypass()) {
            return arrived;
        }
        Map<String, List<ObjectRef>> byPeer = new LinkedHashMap<>();
        for (TaskInput in : inputs) {
            List<String> hints = job.hints().getOrDefault(in.id(), List.of());
            if (!hints.isEmpty() && in.unpack() == TaskInput.AS_STORED) {
                byPeer.computeIfAbsent(hints.get(0), k -> new ArrayList<>()).add(ref(in));
            }
        }
        byPeer.values().removeIf(refs -> refs.size() < 2);
        List<Future<?>> started = new ArrayList<>();
        Map.Entry<String, List<ObjectRef>> own = null;
        for (Map.Entry<String, List<ObjectRef>> e : byPeer.entrySet()) {
            if (own == null) {
                own = e; // this thread asks the first peer while helpers ask the others
            } else {
                started.add(HELPERS.submit(() -> arrived.putAll(cache.gather(e.getKey(), e.getValue()))));
            }
        }
        if (own != null) {
            arrived.putAll(cache.gather(own.getKey(), own.getValue()));
        }
        for (Future<?> f : started) {
            try {
                f.get();
            } catch (ExecutionException e) {
                log.warn("gathering inputs of task {}: {}", job.taskId(), e.getCause().toString()); // each is fetched alone
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return arrived;
    }

    private static ObjectRef ref(TaskInput in) {
        return new ObjectRef(in.id(), in.source(), in.size(), in.checksum(), ObjectRef.Unpack.values()[in.unpack()]);
    }

    /** Puts the task's own copy of one input at {@code target}. */
    private void stage(TaskInput in, Job job, Path target, Counts counts, Map<String, Lease> gathered)
            throws FetchException, IOException {
        ObjectRef ref = ref(in);
        if (in.directory() != null) {
            Files.createDirectories(target.getParent()); // a directory several inputs go into (gather)
        }
        if (cache == null || job.bypass()) {
            // no data diffusion: this task's own copy, straight from the shared store
            Path packed = in.unpack() == TaskInput.AS_STORED ? target
                    : target.resolveSibling(".packed-" + target.getFileName());
            long n = Copy.verified(store, ref.packed(), packed).size();
            if (packed != target) {
                Unpacker.unpack(packed, ref.unpack(), target);
                Files.delete(packed);
            }
            counts.add(2, n, false);
            return;
        }
        // the lease pins the cached copy only while this task's copy is made
        Lease arrived = gathered.remove(ref.key());
        try (Lease lease = arrived != null ? arrived : cache.lease(ref, job.hints().getOrDefault(in.id(), List.of()))) {
            lease.copyTo(target);
            Source src = lease.source();
            int k = src == Source.LOCAL ? 0 : src == Source.PEER ? 1 : 2;
            counts.add(k, src == Source.LOCAL ? lease.size() : lease.bytesMoved(), lease.refetched());
        }
    }

    /**
     * Saves the task's declared outputs for good (written through to the output store), then keeps
     * them in the cache; a temporary output is only held in the cache (its id added to {@code held}),
     * unless the cache cannot hold it. Returns what went wrong, or null.
     */
    private String save(Sandbox box, TaskSpec staged, List<TaskOutput> declared, boolean bypass, Counts counts,
                        List<String> held, List<DataCodec.ArchivedOutput> archived) {
        if (declared.isEmpty()) {
            return null;
        }
        if (outputs == null && !allHeld(declared, bypass)) {
            return "the task declares outputs but this executor has nowhere to save them (falkon executor --store "
                    + "DIR or --output-dir DIR)";
        }
        List<String> problems = new ArrayList<>();
        Path dir = Path.of(staged.workDir());
        boolean cached = cache != null && !bypass;
        for (TaskOutput o : declared) {
            OutputFile file;
            try {
                file = box.output(dir, o);
            } catch (Sandbox.Refused e) {
                problems.add(e.getMessage());
                continue;
            }
            if (file == null) {
                problems.add("declared output " + o.path() + " (id " + o.id() + ") was not written");
                continue;
            }
            if (o.temporary() && cached) {
                try {
                    if (cache.hold(o.id(), file)) {
                        held.add(o.id());
                        continue;
                    }
                } catch (FetchException e) {
                    problems.add(e.getMessage());
                    continue;
                }
                if (outputs == null) {
                    problems.add("temporary output " + o.path() + " (id " + o.id() + ") does not fit in the cache, and "
                            + "this executor has nowhere else to save it (falkon executor --store DIR or --output-dir DIR)");
                    continue;
                }
                log.debug("temporary output {} does not fit in the cache: written to the store", o.id());
            }
            if (o.archived()) {
                try {
                    OutputArchive.Entry e = archive.append(o.id(), file.path());
                    archived.add(new DataCodec.ArchivedOutput(o.id(), e.archive(), e.offset(), e.size(), e.sha256()));
                    counts.wrote(e.size());
                } catch (IOException e) {
                    problems.add(e.getMessage());
                }
                continue;
            }
            try {
                long n = Files.size(file.path());
                // the cache takes the sandbox's own file next: the store gets a copy of it
                outputs.save(o.id(), cached ? file.copied() : file);
                counts.wrote(n);
            } catch (IOException e) {
                problems.add(e.getMessage());
                continue;
            }
            if (cached) {
                try {
                    cache.register(o.id(), file);
                } catch (FetchException e) {
                    // saved already: the cache only keeps a copy for later tasks here
                    log.debug("output {} not kept in the cache: {}", o.id(), e.getMessage());
                }
            }
        }
        return problems.isEmpty() ? null : String.join("; ", problems);
    }

    /** Whether every output may stay in the cache alone: all temporary, with a cache in use. */
    private boolean allHeld(List<TaskOutput> declared, boolean bypass) {
        if (cache == null || bypass) {
            return false;
        }
        for (TaskOutput o : declared) {
            if (!o.temporary()) {
                return false;
            }
        }
        return true;
    }

}
