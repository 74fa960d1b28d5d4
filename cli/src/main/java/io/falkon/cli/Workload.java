package io.falkon.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.falkon.client.FalkonClient;
import io.falkon.client.FalkonException;
import io.falkon.client.Instance;
import io.falkon.client.TaskInstance;
import io.falkon.client.TaskResult;
import io.falkon.protocol.DataCodec;
import io.falkon.protocol.DataStats;
import io.falkon.protocol.TaskStatus;
import io.falkon.protocol.fs.OwnerOnly;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.BitSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs a task file through a client: streams the tasks in (bundled, with backpressure), counts
 * the results, reports failures with the line they came from, optionally writes every result as
 * JSON lines, and sums up. Shared by {@code falkon submit} and {@code falkon run}.
 */
final class Workload {
    /** Made when JSON is first written or read (a --json summary, the status watch), not for every run. */
    private static final class Json {
        static final ObjectMapper JSON = new ObjectMapper();
    }
    private static final int MAX_FAILURES_SHOWN = 10;
    /** The most of a failing task's stderr shown on its summary line. */
    static final int MAX_REASON_CHARS = 300;
    /** Results reach the results file within this long (and all of them on Ctrl-C). */
    static final long FLUSH_NANOS = 200_000_000L;

    /**
     * What happened: every task read ends succeeded, failed (it ran, or could not, and said so),
     * cancelled (the run was stopped first) or lost (no result will come: the instance was lost, or
     * the task was never sent); {@code data} counts where inputs came from (null when no task had
     * inputs). {@code interrupted}: the run was stopped (Ctrl-C), and said so itself.
     */
    record Summary(long tasks, long succeeded, long failed, long cancelled, long lost, double seconds,
                   double startupSeconds, DataStats data, boolean interrupted, String halted, long notRun,
                   String stopped, long skipped) {
        Summary(long tasks, long succeeded, long failed, long cancelled, long lost, double seconds,
                double startupSeconds, DataStats data, boolean interrupted, String halted, long notRun,
                String stopped) {
            this(tasks, succeeded, failed, cancelled, lost, seconds, startupSeconds, data, interrupted, halted, notRun,
                    stopped, 0);
        }

        boolean allSucceeded() {
            return failed == 0 && lost == 0 && cancelled == 0;
        }

        /** Tasks that ran to their end per second (cancellations are not work done). */
        double tasksPerSecond() {
            return seconds > 0 ? (succeeded + failed) / seconds : 0;
        }

        String json() {
            ObjectNode o = JsonTree.object();
            o.put("tasks", tasks);
            o.put("succeeded", succeeded);
            o.put("failed", failed);
            o.put("cancelled", cancelled);
            if (notRun > 0) {
                o.put("notRun", notRun);
            }
            if (skipped > 0) {
                o.put("skipped", skipped);
            }
            o.put("lost", lost);
            o.put("seconds", Math.round(seconds * 1000) / 1000.0);
            o.put("startupSeconds", Math.round(startupSeconds * 1000) / 1000.0);
            o.put("tasksPerSecond", Math.round(tasksPerSecond() * 10) / 10.0);
            if (halted != null) {
                o.put("halted", halted);
            }
            if (stopped != null) {
                o.put("stopped", stopped);
            }
            if (data != null) {
                ResultJson.putData(o, data);
            }
            return JsonTree.write(o);
        }

        String text() {
            // built without java.util.Formatter: its first use loads the locale's number formats, which
            // was a twentieth of a one-line run's main thread (docs/benchmarks.md, "Start-up")
            String line = tasks + " tasks: " + succeeded + " succeeded, " + failed + " failed"
                    + (notRun == 0 ? "" : " (" + notRun + " not run: a task they need failed)")
                    + (skipped == 0 ? "" : ", " + skipped + " skipped (done before)")
                    + (cancelled == 0 ? "" : ", " + cancelled + " cancelled")
                    + (lost == 0 ? "" : ", " + lost + " LOST (no result)")
                    + " in " + fixed(seconds, 3) + " s (" + fixed(tasksPerSecond(), 1) + " tasks/s; "
                    + fixed(startupSeconds, 1) + " s of start-up before)";
            if (halted != null) {
                line += "; halted early (--halt " + halted + ")";
            }
            if (stopped != null) {
                line += "; stopped early: " + stopped;
            }
            if (data != null && data.accesses() > 0) {
                line += String.format("; inputs: %d local hits, %d from peers, %d from the store (%.0f%% hits)",
                        data.localHits(), data.peerHits(), data.misses(),
                        100.0 * (data.localHits() + data.peerHits()) / data.accesses());
            }
            if (data != null && data.bytesWritten() > 0) {
                line += String.format("; outputs: %,d bytes written to the store", data.bytesWritten());
            }
            return line;
        }

        /** {@code v} rounded half up to {@code places} decimals, as {@code %.Nf} prints it in English. */
        static String fixed(double v, int places) {
            long scale = (long) Math.pow(10, places);
            if (!Double.isFinite(v) || Math.abs(v) >= Long.MAX_VALUE / (double) scale) {
                return String.format("%." + places + "f", v); // not a figure a run gives: the general way
            }
            long n = Math.round(Math.abs(v) * scale);
            String digits = Long.toString(n % scale);
            return (Math.copySign(1.0, v) < 0 ? "-" : "") + n / scale
                    + (places == 0 ? "" : "." + "0".repeat(places - digits.length()) + digits);
        }
    }

    private final PrintStream err = System.err;
    private final AtomicLong succeeded = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong cancelled = new AtomicLong();
    /** Of the failed: never run, a task they need failed (workflows). */
    private final AtomicLong dependencyFailed = new AtomicLong();
    /** Tasks --skip-done passed over: done before. */
    private long skippedDone;
    private final AtomicLong failuresShown = new AtomicLong();
    private int[] lines = new int[1024];
    /** Each task's number in its file (from 1), by its place among the tasks submitted. */
    private long[] numbers = new long[1024];
    /** Task ids that got a result. */
    private final BitSet answered = new BitSet();
    private volatile boolean sawInputs;
    private DataStats data = DataStats.ZERO;
    private BufferedWriter results;
    private long lastFlushNanos = System.nanoTime();
    /** The lines as written, kept for the results file (so that failures can be rerun); null without one. */
    private String[] texts;
    /** What tags each task's output (--tag), by task; null without it. */
    private String[] tags;
    private volatile TaskInstance running;
    private OutputPrinter printer;
    private ScheduledExecutorService flusher;
    /** Guards {@link #finished} and {@link #interrupted}: the run ends, or is stopped, not both. */
    private final Object ending = new Object();
    private volatile boolean finished;
    private volatile boolean interrupted;
    /** How to run the same again with {@code --rerun-failed} (null: not possible without a results file). */
    private String rerunCommand;
    /** {@code --halt}: when to stop early (null: never); the file's task count for a percentage. */
    private Halt halt;
    private long total;
    /** Set once --halt is triggered: nothing more is submitted. */
    private volatile boolean halting;
    /** Tasks of the file never submitted because the run halted (counted as cancelled). */
    private long notStarted;
    private Thread haltThread;
    /** Why the run stopped before its end, other than --halt (falkon run: its executors are gone), or null. */
    private volatile String stoppedBecause;

    /** How many executors the dispatcher has (its status document), or null: not watched. */
    private Supplier<String> dispatcherStatus;
    /** When the wait for a first executor is reported, and again (seconds since the run began). */
    static final long[] NO_EXECUTOR_REPORTS = {5, 15, 30, 60, 120, 300, 600};

    /**
     * Watches the dispatcher while no task has finished: with no executor registered, the tasks wait
     * silently, so it says so on stderr after 5 s, and again as the wait goes on ({@code falkon
     * submit}: the user cannot see the dispatcher).
     *
     * @param status the dispatcher's status document (its {@code executors.registered} is read)
     */
    Workload watchingExecutors(Supplier<String> status) {
        this.dispatcherStatus = status;
        return this;
    }

    /**
     * Stops the run if {@code failure} fails before the run has ended ({@code falkon run}: every
     * local executor exited, or none registered): nothing more is submitted, the unfinished tasks are
     * cancelled, and the summary says why. Without it such a run would wait for ever.
     */
    Workload stoppingWhen(CompletableFuture<?> failure) {
        failure.whenComplete((ok, e) -> {
            if (e != null) {
                stop((e instanceof CompletionException && e.getCause() != null ? e.getCause() : e).getMessage());
            }
        });
        return this;
    }

    /**
     * Runs every task of {@code file} on a new instance, in named steps: the results file, the
     * interrupt hook and the watchers set up; every task submitted; the results awaited; what was
     * set up closed; the summary made.
     *
     * @param total   tasks in the file if known (for the progress bar), else -1
     * @param options where results (--results) and the tasks' output go
     */
    Summary run(Supplier<? extends TaskInstance> newInstance, TaskFile file, long total, WorkloadOptions options)
            throws IOException, InterruptedException {
        Path resultsFile = options.results;
        if (resultsFile != null) {
            keepResults(resultsFile, options.appendResults());
        }
        SkipDone.Plan plan = options.skipPlan();
        if (plan != null) {
            passedOverAsDone(plan);
        }
        long start = System.nanoTime();
        // Ctrl-C (or SIGTERM) while it runs: what finished stays on disk, the rest is cancelled, and
        // the user is told how far it got
        Thread onInterrupt = new Thread(() -> interrupted(resultsFile, total), "falkon-interrupted");
        Runtime.getRuntime().addShutdownHook(onInterrupt);
        // from the process's start to here: the JVM, the dispatcher and executors (falkon run), the connection
        double startup = ProcessAge.seconds();
        rerunCommand = options.rerunCommand();
        this.halt = options.haltPolicy(total);
        this.total = total;
        ScheduledExecutorService watch = dispatcherStatus == null ? null : watchExecutors(start);
        // lambdas rather than two method references of one shape (AtomicLong::get), whose second the
        // class archive did not hold: the JVM made it at every run (docs/benchmarks.md, "an eighth pass")
        Progress progress = Progress.startIfTerminal(() -> succeeded.get() + failed.get(), () -> failed.get(),
                () -> cancelled.get(), total);
        printer = options.printer(progress);
        if (options.tag && printer != null) {
            tags = new String[1024];
            printer.tags(this::tagOf);
        }
        Submission sent;
        try (TaskInstance instance = newInstance.get()) {
            StartupTrace.mark("run: instance created");
            running = instance;
            instance.onResult(this::result);
            instance.onRefused(this::refused);
            sent = submitAll(instance, file);
            StartupTrace.mark("run: tasks submitted");
            awaitResults(instance, sent);
        } finally {
            closeWhatRan(onInterrupt, progress, watch);
        }
        return summary(file, sent, (System.nanoTime() - start) / 1e9, startup);
    }

    /** What submitting the file did: lines read, tasks submitted, and why the rest was never sent (or null). */
    private static final class Submission {
        long read;
        long submitted;
        FalkonException lostCause;
    }

    /** Sets up the results file (--results) and the flusher that keeps it within 200 ms of the results. */
    private void keepResults(Path resultsFile, boolean append) throws IOException {
        results = openResults(resultsFile, append);
        texts = new String[1024];
        // a long task after a burst of results must not keep them in the buffer
        flusher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "falkon-results-flush");
            t.setDaemon(true);
            return t;
        });
        flusher.scheduleAtFixedRate(this::flushResults, FLUSH_NANOS, FLUSH_NANOS, TimeUnit.NANOSECONDS);
    }

    /** Submits every task of the file (the instance bundles and applies backpressure), then reads the rest. */
    private Submission submitAll(TaskInstance instance, TaskFile file) {
        Submission s = new Submission();
        while (file.hasNext()) {
            TaskFile.Entry e = file.next();
            s.read++;
            if (!sawInputs && (!e.spec().inputs().isEmpty() || !e.spec().outputs().isEmpty())) {
                sawInputs = true; // the summary then says where data came from and went, even if none did
            }
            if (halting) {
                notStarted++; // --halt: nothing more starts
                continue;
            }
            remember(s.submitted, e.line(), e.text(), e);
            try {
                instance.submit(e.spec());
            } catch (FalkonException lost) {
                if (halting) {
                    notStarted++;
                    continue;
                }
                s.lostCause = lost; // the rest of the file is never sent
                break;
            } catch (IllegalArgumentException tooLarge) {
                // more than this connection can carry (a WS request's bound): that task fails alone
                failed.incrementAndGet();
                if (failuresShown.incrementAndGet() <= MAX_FAILURES_SHOWN) {
                    err.println("line " + e.line() + ": not submitted: " + bounded(tooLarge.getMessage()));
                }
                continue;
            }
            s.submitted++;
        }
        while (file.hasNext()) {
            file.next();
            s.read++;
        }
        return s;
    }

    /** Waits for every result (and a --halt's account of itself); a lost connection is the run's cause. */
    private void awaitResults(TaskInstance instance, Submission sent) throws InterruptedException {
        instance.awaitAll();
        StartupTrace.mark("run: results in");
        Thread halter = haltThread;
        if (halter != null) {
            halter.join(); // its account comes before the summary
        }
        if (sent.lostCause == null && !halting) {
            sent.lostCause = instance.lostCause();
        }
    }

    /** The run is over, however it ended: the hook, the printer, the progress bar, the watcher and the results file. */
    private void closeWhatRan(Thread onInterrupt, Progress progress, ScheduledExecutorService watch) {
        synchronized (ending) {
            finished = true;
        }
        try {
            Runtime.getRuntime().removeShutdownHook(onInterrupt);
        } catch (IllegalStateException e) {
            // shutting down already: the hook reports
        }
        if (printer != null) {
            printer.flush();
        }
        if (progress != null) {
            progress.close();
        }
        if (watch != null) {
            watch.shutdownNow();
        }
        closeResults();
    }

    /** The run's summary; tasks with no result are reported as lost, with why. */
    private Summary summary(TaskFile file, Submission sent, double seconds, double startup) {
        if (sent.read == 0) {
            err.println("no tasks in " + file.name() + " (only blank lines and comments)");
        }
        DataStats inputs;
        synchronized (this) {
            inputs = sawInputs ? data : null;
        }
        long notRun = cancelled.get() + notStarted;
        long lost = sent.read - succeeded.get() - failed.get() - notRun;
        if (lost > 0 && !interrupted) {
            reportLost(lost, sent.submitted, sent.read, sent.lostCause);
        }
        if (halting && rerunCommand != null) {
            err.println("run what did not succeed: " + rerunCommand);
        }
        String why = stoppedBecause;
        return new Summary(sent.read + skippedDone, succeeded.get(), failed.get(), notRun, lost, seconds, startup,
                inputs, interrupted, halting && why == null ? halt.spec() : null, dependencyFailed.get(), why,
                skippedDone);
    }

    /**
     * --skip-done: the tasks it passes over are counted, and have their line in the results file
     * (status {@code SKIPPED}, and why they are done).
     */
    private void passedOverAsDone(SkipDone.Plan plan) {
        for (int line : plan.lines()) {
            if (plan.runs(line)) {
                continue;
            }
            skippedDone++;
            if (results != null) {
                try {
                    results.write(ResultJson.skipped(plan.number(line), line, plan.text(line), plan.why(line)));
                    results.newLine();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
    }

    /**
     * The results file: new, or appended to (its last result of a line is the one a later rerun
     * reads) for a rerun whose results go to the file it reruns from.
     */
    private static BufferedWriter openResults(Path file, boolean append) throws IOException {
        if (append) {
            boolean endsWithNewline;
            try (SeekableByteChannel c = Files.newByteChannel(file)) {
                ByteBuffer last = ByteBuffer.allocate(1);
                endsWithNewline = c.size() == 0 || (c.position(c.size() - 1).read(last) == 1 && last.get(0) == '\n');
            }
            BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8, StandardOpenOption.APPEND);
            if (!endsWithNewline) {
                w.newLine(); // a line cut short (the writer was killed) stays a line of its own
            }
            return w;
        }
        // results hold the tasks' output: a new file is readable by its owner alone (docs/security.md)
        return new BufferedWriter(Channels.newWriter(OwnerOnly.channel(file, StandardOpenOption.CREATE,
                StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING), StandardCharsets.UTF_8));
    }

    /**
     * What {@code submit --detach} left running: the instance's key, its tasks, and (when only some
     * of the file's tasks were submitted) the line of each.
     */
    record Detached(String key, long tasks, int[] lines) {
    }

    /**
     * Submits every task to a new instance that keeps its results, then lets the instance go: its
     * tasks run on, and its results wait on the dispatcher (within its lease) for {@code falkon wait}
     * and {@code results}. If the submission fails, or is interrupted, the instance is destroyed:
     * half a submission does not run on unseen.
     *
     * @param selective whether only some of the file's tasks are submitted (their lines are then returned)
     */
    Detached detach(FalkonClient client, TaskFile file, String name, boolean selective) throws InterruptedException {
        Instance instance = client.createInstance(name).keepingResults();
        Thread onInterrupt = new Thread(instance::close, "falkon-interrupted");
        Runtime.getRuntime().addShutdownHook(onInterrupt);
        boolean detached = false;
        try {
            long submitted = 0;
            int previousLine = 0;
            boolean reordered = false; // a workflow submitted in a dependency order, not the file's
            while (file.hasNext()) {
                TaskFile.Entry e = file.next();
                reordered |= e.line() < previousLine;
                previousLine = e.line();
                remember(submitted, e.line(), null, e);
                instance.submit(e.spec());
                submitted++;
            }
            String key = instance.detach();
            detached = true;
            return new Detached(key, submitted, selective || reordered ? Arrays.copyOf(lines, (int) submitted) : null);
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(onInterrupt);
            } catch (IllegalStateException e) {
                // shutting down: the hook destroys the instance
            }
            if (!detached) {
                instance.close();
            }
        }
    }

    /** The watch of {@link #watchingExecutors}: a daemon thread, stopped when the run ends. */
    private ScheduledExecutorService watchExecutors(long startNanos) {
        ScheduledExecutorService s = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "falkon-executor-watch");
            t.setDaemon(true);
            return t;
        });
        for (long at : NO_EXECUTOR_REPORTS) {
            s.schedule(() -> {
                TaskInstance in = running;
                if (finished || in == null || succeeded.get() + failed.get() > 0 || in.outstanding() == 0) {
                    return;
                }
                long registered = registeredExecutors();
                if (registered == 0) {
                    err.println("no executor is registered with the dispatcher: " + in.outstanding()
                            + " task(s) waiting for one (" + Math.round((System.nanoTime() - startNanos) / 1e9)
                            + " s so far); start one with: falkon executor --dispatcher HOST:PORT");
                }
            }, at, TimeUnit.SECONDS);
        }
        return s;
    }

    /** {@code executors.registered} of the dispatcher's status, -1 when it cannot be read. */
    private long registeredExecutors() {
        try {
            return Json.JSON.readTree(dispatcherStatus.get()).at("/executors/registered").asLong(-1);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** Says why tasks were lost, and which lines (the first ten) never got a result. */
    private void reportLost(long lost, long submitted, long read, FalkonException cause) {
        err.println(lost + " task(s) got no result" + (cause == null ? "" : ": " + cause.getMessage()));
        if (read > submitted) {
            err.println((read - submitted) + " of them were never sent (the instance was lost first)");
        }
        long shown = 0;
        synchronized (this) {
            for (long id = 0; id < submitted && shown < MAX_FAILURES_SHOWN; id++) {
                if (!answered.get((int) id)) {
                    err.println("line " + lines[(int) id] + ": lost");
                    shown++;
                }
            }
        }
    }

    /**
     * The shutdown hook: the process is being stopped (Ctrl-C, SIGTERM) before the work is done.
     * The instance is destroyed (its unfinished tasks cancelled, not left running for the lease),
     * the results that arrived are flushed to the file, and a summary says how far it got.
     */
    private void interrupted(Path resultsFile, long total) {
        synchronized (ending) {
            if (finished) {
                return; // the run ended by itself and reports itself
            }
            interrupted = true;
        }
        TaskInstance in = running;
        long unfinished = in == null ? 0 : in.outstanding();
        long succeededBefore = succeeded.get();
        long failedBefore = failed.get();
        long finishedBefore = succeededBefore + failedBefore;
        if (in != null) {
            try {
                in.close();
            } catch (RuntimeException e) {
                // the connection may be gone already: its lease then ends it
            }
        }
        closeResults();
        err.println();
        err.println("interrupted: " + finishedBefore + (total >= 0 ? " of " + total : "") + " tasks finished ("
                + succeededBefore + " succeeded, " + failedBefore + " failed); " + unfinished
                + " unfinished task(s) cancelled" + (resultsFile == null ? ""
                : "; every finished result is in " + resultsFile + ", the cancelled ones too"));
        err.println(rerunCommand != null ? "run what did not succeed: " + rerunCommand
                : "(with --results FILE, a run stopped early can be carried on with --rerun-failed FILE)");
        err.flush();
    }

    private synchronized void flushResults() {
        if (results != null) {
            try {
                results.flush();
                lastFlushNanos = System.nanoTime();
            } catch (IOException e) {
                err.println("cannot write the results file: " + e.getMessage());
            }
        }
    }

    private synchronized void closeResults() {
        if (flusher != null) {
            flusher.shutdownNow();
        }
        if (results != null) {
            try {
                results.close();
            } catch (IOException e) {
                err.println("cannot finish the results file: " + e.getMessage());
            }
            results = null;
        }
    }

    private synchronized void remember(long taskId, int line, String text, TaskFile.Entry e) {
        if (taskId >= numbers.length) {
            numbers = Arrays.copyOf(numbers, numbers.length * 2);
        }
        numbers[(int) taskId] = e == null ? taskId + 1 : e.number();
        if (texts != null) {
            if (taskId >= texts.length) {
                texts = Arrays.copyOf(texts, texts.length * 2);
            }
            texts[(int) taskId] = text;
        }
        if (tags != null && e != null) {
            if (taskId >= tags.length) {
                tags = Arrays.copyOf(tags, tags.length * 2);
            }
            tags[(int) taskId] = e.tag();
        }
        if (taskId >= lines.length) {
            lines = Arrays.copyOf(lines, lines.length * 2);
        }
        lines[(int) taskId] = line;
    }

    private synchronized String tagOf(long taskId) {
        return tags != null && taskId < tags.length && tags[(int) taskId] != null ? tags[(int) taskId] : "";
    }

    /** A task as a person finds it: its line, or its number when the line is not known. */
    private String nameOf(long taskId) {
        int line = lineOf(taskId);
        return line >= 0 ? "line " + line : "task " + numberOf(taskId);
    }

    /** The task's number in its file (from 1): its place among all the file's tasks, a rerun's too. */
    private synchronized long numberOf(long taskId) {
        return taskId < numbers.length && numbers[(int) taskId] > 0 ? numbers[(int) taskId] : taskId + 1;
    }

    private synchronized int lineOf(long taskId) {
        return taskId < lines.length ? lines[(int) taskId] : -1;
    }

    /** On the client's I/O thread, for every result. */
    private void result(TaskResult r) {
        synchronized (this) {
            answered.set((int) r.taskId());
        }
        DataStats d = r.data();
        if (d.accesses() > 0 || d.bytesWritten() > 0) {
            sawInputs = true;
            synchronized (this) {
                data = data.plus(d);
            }
        }
        if (r.succeeded()) {
            succeeded.incrementAndGet();
        } else if (r.status() == TaskStatus.CANCELLED) {
            cancelled.incrementAndGet(); // not a failure of the task: the run was stopped first
        } else {
            failed.incrementAndGet();
            if (r.status() == TaskStatus.DEPENDENCY_FAILED) {
                dependencyFailed.incrementAndGet(); // not one that ran and failed: --halt does not count it
            } else {
                checkHalt();
            }
            if (failuresShown.incrementAndGet() <= MAX_FAILURES_SHOWN) {
                err.println("line " + lineOf(r.taskId()) + ": " + describe(r, this::nameOf));
            } else if (failuresShown.get() == MAX_FAILURES_SHOWN + 1) {
                err.println("(more failures not shown" + (results == null ? "; use --results FILE to keep them all)" : ")"));
            }
        }
        write(r);
        if (printer != null) {
            printer.finished(r.taskId(), numberOf(r.taskId()), lineOf(r.taskId()), r);
        }
    }

    /**
     * On the client's I/O thread, after a failure: once {@code --halt}'s threshold is reached, the
     * run stops early, on a thread of its own (the I/O thread must not wait for the dispatcher).
     */
    private void checkHalt() {
        Halt h = halt;
        if (h == null || halting || !h.reached(failed.get() - dependencyFailed.get(), total)) {
            return;
        }
        stopOnItsOwnThread(h.now(), "halting (--halt " + h.spec() + "): " + failed.get() + " task(s) failed; "
                + (h.now() ? "the unfinished tasks are cancelled" : "nothing more starts, the running tasks finish"),
                null);
    }

    /** The run cannot go on ({@link #stoppingWhen}): the unfinished tasks are cancelled. */
    private void stop(String why) {
        stopOnItsOwnThread(true, "stopping: " + why + "; the unfinished tasks are cancelled", why);
    }

    /**
     * Nothing more is submitted; the instance is ended ({@code cancelRunning}) or halted, on a thread
     * of its own (the caller may be the client's I/O thread, which must not wait for the dispatcher).
     *
     * @param why for the summary, when it is not --halt
     */
    private void stopOnItsOwnThread(boolean cancelRunning, String message, String why) {
        synchronized (ending) {
            if (halting || finished || interrupted) {
                return;
            }
            stoppedBecause = why;
            halting = true;
        }
        Thread t = new Thread(() -> {
            TaskInstance in = running;
            err.println(message);
            if (in == null) {
                return; // not made yet: the run sees `halting` before it submits anything
            }
            try {
                if (cancelRunning) {
                    in.close();
                } else {
                    in.halt();
                }
            } catch (RuntimeException e) {
                // the instance is gone already (lost, or interrupted): nothing more starts anyway
            }
        }, "falkon-halt");
        haltThread = t;
        t.start();
    }

    /**
     * On the client's I/O thread: the dispatcher refused a task (invalid there, e.g. over its
     * {@code --max-task-bytes}); it fails with the dispatcher's reason, and the rest of the file runs.
     */
    private void refused(long taskId, FalkonException why) {
        synchronized (this) {
            answered.set((int) taskId);
        }
        failed.incrementAndGet();
        checkHalt();
        if (failuresShown.incrementAndGet() <= MAX_FAILURES_SHOWN) {
            err.println("line " + lineOf(taskId) + ": refused by the dispatcher: " + bounded(why.getMessage()));
        }
        if (printer != null) {
            printer.skipped(taskId);
        }
        writeLine(taskId, (line, command) -> ResultJson.refused(numberOf(taskId), line, command,
                "refused by the dispatcher: " + why.getMessage()));
    }

    /**
     * What happened to a task that did not succeed; one that never ran because a task it needs did
     * not succeed names that task as {@code task} says (its line, say).
     */
    static String describe(TaskResult r, java.util.function.LongFunction<String> task) {
        DataCodec.Dependency d = r.status() == TaskStatus.DEPENDENCY_FAILED ? DataCodec.dependencyOf(r.execution())
                : null;
        if (d == null) {
            return describe(r);
        }
        String what = d.what().startsWith("after:") ? "it runs after '" + d.what().substring(6) + "'"
                : "it needs '" + d.what() + "'";
        return "not run: " + task.apply(d.producer()) + " did not succeed (" + what + ")";
    }

    static String describe(TaskResult r) {
        String what = r.status() == TaskStatus.EXITED ? "exit " + r.exitCode() : r.status().toString().toLowerCase();
        String detail = r.execution().detail().isEmpty() ? "" : " (" + bounded(r.execution().detail()) + ")";
        String stderr = r.stderr().strip();
        int nl = stderr.indexOf('\n');
        if (nl >= 0) {
            stderr = stderr.substring(0, nl) + " ...";
        }
        return what + detail + (stderr.isEmpty() ? "" : ": " + bounded(stderr));
    }

    /** At most {@link #MAX_REASON_CHARS} characters, saying how many more there were. */
    static String bounded(String s) {
        return s.length() <= MAX_REASON_CHARS ? s
                : s.substring(0, MAX_REASON_CHARS) + "... (" + (s.length() - MAX_REASON_CHARS) + " more characters)";
    }

    /** Writes one result line (if there is a results file); results reach the disk within 200 ms. */
    private void write(TaskResult r) {
        // a task that never ran names the one that failed by its line, not by the dispatcher's task id
        String detail = r.status() == TaskStatus.DEPENDENCY_FAILED ? describe(r, this::nameOf) : null;
        writeLine(r.taskId(), (line, command) -> ResultJson.line(r, numberOf(r.taskId()), line, command, detail));
    }

    /** Writes the result line {@code json} makes of the task's line number and text, if there is a results file. */
    private synchronized void writeLine(long taskId, java.util.function.BiFunction<Integer, String, String> json) {
        if (results == null) {
            return;
        }
        int line = lineOf(taskId);
        String command = texts != null && taskId < texts.length ? texts[(int) taskId] : null;
        try {
            results.write(json.apply(line, command));
            results.newLine();
            long now = System.nanoTime();
            if (now - lastFlushNanos > FLUSH_NANOS) {
                results.flush();
                lastFlushNanos = now;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
