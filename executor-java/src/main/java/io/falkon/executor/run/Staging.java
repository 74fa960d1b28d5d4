package io.falkon.executor.run;

import io.falkon.datacache.CacheStore;
import io.falkon.datacache.Copy;
import io.falkon.datacache.FetchException;
import io.falkon.datacache.Lease;
import io.falkon.datacache.ObjectRef;
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

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * Data diffusion around one task: before it runs, its inputs are fetched (from the cache, a peer or
 * the shared store) and linked into a fresh sandbox directory, which becomes its working directory
 * unless it names one; after it succeeds, its declared outputs are registered in the cache. The
 * task sees:
 * <ul>
 *   <li>each input as {@code NAME} in the sandbox (a symbolic link to the cached, read-only file or
 *       unpacked directory; NAME is the input's name, else the last part of its id);</li>
 *   <li>{@code FALKON_INPUT_DIR} = the sandbox, {@code FALKON_INPUT_0}, {@code FALKON_INPUT_1}, ... =
 *       the inputs' paths in order, {@code FALKON_INPUTS} = all of them separated by colons.</li>
 * </ul>
 * Without a cache (or when the dispatcher says to bypass it) inputs are copied from the shared
 * store into the sandbox for this task alone.
 */
public final class Staging {
    private final CacheStore cache;
    private final StoreFetcher store;
    private final Path sandboxes;
    private final AtomicLong seq = new AtomicLong();

    /** @param cache null for an executor without a cache */
    public Staging(CacheStore cache, StoreFetcher store, Path sandboxes) throws IOException {
        this.cache = cache;
        this.store = store;
        this.sandboxes = Files.createDirectories(sandboxes);
    }

    static boolean needed(TaskSpec spec) {
        for (ExtField f : spec.ext()) {
            if (f.tag() == ExtTags.INPUTS || f.tag() == ExtTags.OUTPUTS) {
                return true;
            }
        }
        return false;
    }

    /** Stages, runs with {@code runner}, registers outputs, cleans up; the result carries DATA_STATS. */
    Execution run(Job job, TaskRunner runner) {
        TaskSpec spec = job.spec();
        List<TaskInput> inputs = spec.inputs();
        Path sandbox = sandboxes.resolve("task-" + job.taskId() + "-" + seq.incrementAndGet());
        List<Lease> leases = new ArrayList<>();
        long[] counts = new long[6]; // local, peer, store hits; local, peer, store bytes
        try {
            Files.createDirectories(sandbox);
            List<String> paths = new ArrayList<>();
            for (TaskInput in : inputs) {
                Path link = sandbox.resolve(in.fileName());
                stage(in, job, link, leases, counts);
                paths.add(link.toString());
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
            String outputProblem = x.succeeded() ? register(staged, spec.outputs(), job.bypass()) : null;
            DataStats stats = new DataStats(counts[0], counts[1], counts[2], counts[3], counts[4], counts[5]);
            List<ExtField> ext = new ArrayList<>(x.ext());
            ext.add(new ExtField(ExtTags.DATA_STATS, DataCodec.encodeStats(stats)));
            String detail = outputProblem == null ? x.detail()
                    : (x.detail().isEmpty() ? "" : x.detail() + "; ") + outputProblem;
            return new Execution(x.status(), x.exitCode(), x.flags(), x.startedMicros(), x.finishedMicros(),
                    x.stdout(), x.stderr(), detail, ext);
        } catch (FetchException | IOException e) {
            return Execution.of(TaskStatus.FETCH_FAILED, e.getMessage(), TaskRunner.nowMicros());
        } finally {
            leases.forEach(Lease::close);
            deleteTree(sandbox);
        }
    }

    private void stage(TaskInput in, Job job, Path link, List<Lease> leases, long[] counts)
            throws FetchException, IOException {
        ObjectRef ref = new ObjectRef(in.id(), in.source(), in.size(), in.checksum(),
                ObjectRef.Unpack.values()[in.unpack()]);
        if (cache == null || job.bypass()) {
            // no data diffusion: this task's own copy, straight from the shared store
            Path packed = in.unpack() == TaskInput.AS_STORED ? link : link.resolveSibling(".packed-" + link.getFileName());
            long n = Copy.verified(store, ref.packed(), packed);
            if (packed != link) {
                Unpacker.unpack(packed, ref.unpack(), link);
                Files.delete(packed);
            }
            counts[2]++;
            counts[5] += n;
            return;
        }
        Lease lease = cache.lease(ref, job.hints().getOrDefault(in.id(), List.of()));
        leases.add(lease);
        Files.createSymbolicLink(link, lease.path());
        Source src = lease.source();
        int k = src == Source.LOCAL ? 0 : src == Source.PEER ? 1 : 2;
        counts[k]++;
        counts[3 + k] += src == Source.LOCAL ? lease.size() : lease.bytesMoved();
    }

    /** Registers the task's outputs; returns what went wrong, or null. */
    private String register(TaskSpec staged, List<TaskOutput> outputs, boolean bypass) {
        if (outputs.isEmpty() || cache == null || bypass) {
            return null;
        }
        List<String> problems = new ArrayList<>();
        Path dir = Path.of(staged.workDir());
        for (TaskOutput o : outputs) {
            Path file = dir.resolve(o.path()).normalize();
            if (!Files.isRegularFile(file)) {
                problems.add("output " + o.path() + " was not written");
                continue;
            }
            try {
                cache.register(o.id(), file);
            } catch (FetchException e) {
                problems.add(e.getMessage());
            }
        }
        return problems.isEmpty() ? null : String.join("; ", problems);
    }

    static void deleteTree(Path p) {
        if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> files = Files.walk(p)) { // does not follow the links into the cache
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            // a leftover sandbox costs disk, not correctness
        }
    }
}
