package io.falkon.cli;

import io.falkon.client.ClientOptions;
import io.falkon.executor.ConnectOptions;
import io.falkon.protocol.auth.Token;
import picocli.CommandLine.Model.CommandSpec;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.function.IntPredicate;

/** Options shared by {@code falkon submit} and {@code falkon run}. */
final class WorkloadOptions {

    /** These options on the command line, bound to the fields below (built in code: see {@link CommandModel}). */
    CommandModel model() {
        return CommandModel.of(this)
                .parameters("words", 0, "FILE | COMMAND", "task file: one shell command per line, or a "
                        + ".jsonl file of task specs; - reads commands from standard input. Or a command run for each "
                        + "value given after it with ::: VALUE... or :::: FILE (as GNU parallel), or for each index of "
                        + "--array")
                .option("bundle", "--bundle", "tasks per submission bundle (default: ${DEFAULT-VALUE})")
                .option("maxInFlight", "--max-in-flight", "most unfinished tasks at once (default: ${DEFAULT-VALUE})")
                .option("timeoutSeconds", "--timeout=SECONDS", "wall-time limit for tasks that do not set one (default: none)")
                .option("json", "--json", "print one JSON summary object on stdout at the end")
                .option("results", "--results=FILE", "write every result as a JSON line to FILE (appended to when FILE "
                        + "is also the --rerun-failed file: one record across reruns)")
                .option("quiet", "-q, --quiet", "do not print the tasks' output (with --json it is not printed "
                        + "either: stdout carries the summary)")
                .option("keepOrder", "--keep-order", "print the tasks' output in the order of the file (a finished "
                        + "task waits for the ones before it), not as they finish")
                .option("outputFiles", "--output-files=TEMPLATE", "write each task's output to files "
                        + "instead of printing it: {#} the task's number, {line} its line, {stream} stdout or stderr, e.g. "
                        + "'out/{#}.{stream}'")
                .option("template", "--template=COMMAND", "a command filled from each line of FILE: "
                        + "{} the line, {1} {2} ... its fields, {#} the task number (values with shell syntax are quoted; the "
                        + "line is also in $FALKON_LINE)")
                .option("retriesOnFailure", "--retries=N", "run a task that fails (a non-zero exit, a "
                        + "wall-time kill) again up to N more times, on another executor where one can take it; only its last "
                        + "attempt counts (as GNU parallel's --retries; failures of the framework, such as a lost executor, are "
                        + "retried anyway; default: 0)")
                .option("halt", "--halt=WHEN,fail=N", "stop early once N tasks (or N%% of "
                        + "them) have failed: soon (start nothing more; the running tasks finish) or now (cancel them too); "
                        + "as GNU parallel's --halt (default: never)")
                .option("tag", "--tag", "print each line of a task's output after the task's line (or, for "
                        + ".jsonl, its command) and a TAB, as GNU parallel's --tag")
                .option("dryRun", "--dry-run", "print the command each task would run, one per line, and run "
                        + "nothing")
                .option("name", "--name=NAME", "the instance's name on the dispatcher: what falkon list shows, and what "
                        + "a dispatcher's --share-file gives a share to (default: falkon-cli; with --detach, FILE's name)")
                .option("skipDone", "--skip-done", "run only the tasks that are not done: a task is done when "
                        + "its declared outputs are all in the store and none is older than its inputs there, or, declaring "
                        + "none, when the --results FILE of earlier runs says its line succeeded (FILE is then appended to); "
                        + "what depends on a task that runs runs too; with --dry-run, says why for each task")
                .option("array", "--array=RANGE", "run COMMAND once per index: 1-1000, 0-99:3 (every third), 1,5,9-12; "
                        + "the index is {} and $FALKON_TASK_INDEX (as HyperQueue's --array)")
                .option("rerunFailed", "--rerun-failed=RESULTS|INSTANCE", "run only the tasks of FILE "
                        + "that did not succeed before (failed or never finished): in a results file of an earlier run "
                        + "(--results), or in a detached instance (its id or key)");
    }

    /** The positional words: FILE, or a command for ::: values or --array. */
    List<String> words = new ArrayList<>();
    /** The task file (null: the tasks are made from a command, {@link #generated}). */
    String file;
    String array;
    /** With ::: or --array: what makes the tasks (after {@link #validate}); else null. */
    private ArgumentSources generated;
    private String generatedCommand;
    int bundle = 1000;
    int maxInFlight = 100_000;
    Double timeoutSeconds;
    boolean json;
    Path results;
    boolean quiet;
    boolean keepOrder;
    String outputFiles;

    /** Where the tasks' output goes; null when nowhere. */
    OutputPrinter printer(Progress progress) {
        if (outputFiles == null && (quiet || json)) {
            return null;
        }
        try {
            return new OutputPrinter(System.out, System.err, keepOrder, outputFiles,
                    progress == null ? () -> { } : progress::clear, tag);
        } catch (IllegalArgumentException e) {
            throw new Falkon.UserError(e.getMessage());
        }
    }

    String template;
    /** The instance's name (--name), or null for the default. */
    String name;
    Integer retriesOnFailure;
    String halt;
    boolean tag;
    boolean dryRun;
    boolean skipDone;
    /** With --skip-done: which tasks run and why (after {@link #validate}). */
    private SkipDone.Plan plan;

    /** How FILE's lines become tasks. */
    TaskFile.Format format() {
        try {
            int retries = retriesOnFailure == null ? 0 : retriesOnFailure;
            if (retries < 0 || retries > 255) {
                throw new IllegalArgumentException("--retries must be 0..255, got " + retries);
            }
            return new TaskFile.Format(defaultWallTime(), template == null ? null : new CommandTemplate(template),
                    retries);
        } catch (IllegalArgumentException e) {
            throw new Falkon.UserError(e.getMessage());
        }
    }

    /** When to stop early ({@code --halt}), or null for never. */
    Halt haltPolicy(long total) {
        try {
            Halt h = Halt.parse(halt);
            if (h != null && h.percent() && total < 0) {
                throw new IllegalArgumentException("--halt " + halt + ": a percentage needs a task file, not "
                        + "standard input (how many tasks there are is not known)");
            }
            return h;
        } catch (IllegalArgumentException e) {
            throw new Falkon.UserError(e.getMessage());
        }
    }

    /**
     * {@code --dry-run}: the command each task of FILE would run, on stdout, one per line; nothing
     * is started. Returns the exit code (0).
     */
    int printDryRun() throws IOException {
        if (plan != null) {
            SkipDone.explain(plan, System.err);
        }
        try (TaskFile f = open()) {
            while (f.hasNext()) {
                System.out.println(TaskFile.command(f.next().spec()));
            }
        }
        System.out.flush();
        return 0;
    }

    Duration defaultWallTime() {
        if (timeoutSeconds == null) {
            return null;
        }
        if (timeoutSeconds <= 0) {
            throw new Falkon.UserError("--timeout must be positive");
        }
        return Duration.ofMillis(Math.round(timeoutSeconds * 1000));
    }

    /** Options for a client of the embedded dispatcher, which presents {@code token}. */
    ClientOptions clientOptions(Token token) {
        if (bundle < 1) {
            throw new Falkon.UserError("--bundle must be at least 1");
        }
        return ClientOptions.defaults().withBundleSize(bundle).withMaxInFlight(Math.max(bundle, maxInFlight))
                .withToken(token).withClientName(instanceName("falkon-cli"));
    }

    /** The instance's name: --name, else {@code otherwise}. */
    String instanceName(String otherwise) {
        if (name != null && (name.isBlank() || name.length() > 256 || name.chars().anyMatch(Character::isISOControl))) {
            throw new Falkon.UserError("--name must be 1..256 characters without control characters");
        }
        return name != null ? name : otherwise;
    }

    /** Options for a client of a running dispatcher, reached as {@code connect} says. */
    ClientOptions clientOptions(ConnectOptions connect) {
        try {
            return clientOptions(connect.token().token()).withTls(connect.tls());
        } catch (IllegalArgumentException e) {
            throw new Falkon.UserError(e.getMessage());
        }
    }

    String rerunFailed;

    /** With --rerun-failed: the lines whose tasks run now; null for all. */
    private IntPredicate selected;
    /** With --rerun-failed: lines that succeeded before, run again for the temporary inputs they made. */
    private final java.util.SortedSet<Integer> broughtBack = new java.util.TreeSet<>();

    private static String lineList(java.util.SortedSet<Integer> lines) {
        java.util.List<String> shown = lines.stream().limit(10).map(String::valueOf).toList();
        return (lines.size() == 1 ? "line " : "lines ") + String.join(", ", shown)
                + (lines.size() > shown.size() ? " and " + (lines.size() - shown.size()) + " more" : "");
    }

    /** FILE's tasks as they are to be run (less those that succeeded before, with --rerun-failed). */
    TaskFile open() throws IOException {
        if (generated != null) {
            return TaskFile.generated(generated, generatedCommand, format());
        }
        if (checked != null) {
            List<TaskFile.Entry> tasks = checked;
            checked = null; // the run's task file lets each go once submitted
            return TaskFile.of(file, tasks); // read once, by validate
        }
        return TaskFile.open(file, format()).selecting(selected);
    }

    /**
     * Where inputs no task of the file produces must be, for the check before a run ({@code falkon
     * run}'s store); null when this machine cannot tell (a remote dispatcher's executors' store).
     */
    Path storeRoot;

    /** The tasks {@link #validate} found, kept for the run if the file is small; else null. */
    private List<TaskFile.Entry> checked;

    /**
     * Checks every line of a file before anything runs, and counts the tasks to run; -1 for stdin.
     * With --rerun-failed, finds what succeeded before (an instance reached as {@code connect} says)
     * and says how many tasks are left to run.
     */
    long validate(ConnectOptions connect) throws IOException, InterruptedException {
        ArgumentSources given = ArgumentSources.fromCommandLine();
        if (given != null || array != null) {
            return validateGenerated(given);
        }
        if (words.size() > 1) {
            throw new Falkon.UserError("one task file, not " + words.size() + " words (" + String.join(" ", words)
                    + "): to run a command for each of some values, give them after ::: (COMMAND ::: a b c), or --array");
        }
        file = words.isEmpty() ? null : words.get(0);
        if (file == null) {
            throw new Falkon.UserError("a task file is needed: FILE (one task per line; .jsonl for task specs), or - "
                    + "for standard input");
        }
        try {
            if (file.equals("-")) {
                if (rerunFailed != null || skipDone) {
                    throw new Falkon.UserError((skipDone ? "--skip-done" : "--rerun-failed") + " needs the task file "
                            + "itself, not standard input");
                }
                return -1;
            }
            if (skipDone && rerunFailed != null) {
                throw new Falkon.UserError("--skip-done and --rerun-failed both choose which tasks run: give one (with "
                        + "--results FILE, --skip-done counts the successes FILE records)");
            }
            if (skipDone) {
                if (!Files.isRegularFile(Path.of(file))) {
                    throw new Falkon.UserError("task file " + file + " does not exist or is not a file");
                }
                plan = SkipDone.plan(file, format(), storeRoot, results != null && Files.isRegularFile(results)
                        ? results : null);
                selected = plan::runs;
            }
            if (rerunFailed != null) {
                if (!Files.isRegularFile(Path.of(file))) {
                    throw new Falkon.UserError("task file " + file + " does not exist or is not a file");
                }
                Rerun.Selection s = Rerun.toRun(file, rerunFailed, connect);
                selected = s.lines();
                if (s.record() != null) {
                    sameTasksAs(s.record());
                }
                selected = Rerun.withTemporaryProducers(file, format(), selected, broughtBack);
            }
            TaskFile.Checked c = TaskFile.validate(file, format(), selected, storeRoot);
            httpsInputs = c.httpsInputs();
            checked = c.entries();
            if (rerunFailed != null) {
                System.err.println(c.tasks() == 0 ? "nothing to rerun: every task of " + file + " succeeded in "
                        + rerunFailed : "rerunning " + c.tasks() + " of the " + (c.tasks() + c.skipped()) + " tasks of "
                        + file + " (those that did not succeed in " + rerunFailed + (broughtBack.isEmpty() ? ")"
                        : "; and " + lineList(broughtBack) + " again, which made temporary inputs of theirs)"));
            }
            if (plan != null && !dryRun) {
                System.err.println(c.tasks() == 0 ? "nothing to run: every task of " + file + " is done (--dry-run "
                        + "says why)" : "running " + c.tasks() + " of the " + (c.tasks() + c.skipped()) + " tasks of "
                        + file + "; " + c.skipped() + (c.skipped() == 1 ? " is" : " are") + " done (--dry-run says why for each)");
            }
            return c.tasks();
        } catch (IllegalArgumentException e) {
            throw new Falkon.UserError(e.getMessage());
        }
    }

    /** The tasks of COMMAND ::: VALUES or --array RANGE COMMAND: checked, and counted. */
    private long validateGenerated(ArgumentSources given) {
        if (given != null && array != null) {
            throw new Falkon.UserError("--array and ::: both give the values: give one");
        }
        String what = array != null ? "--array" : ":::";
        if (rerunFailed != null || skipDone) {
            throw new Falkon.UserError((skipDone ? "--skip-done" : "--rerun-failed") + " needs a task file; " + what
                    + " makes its tasks from the command line (write them to a file with --dry-run)");
        }
        if (template != null) {
            throw new Falkon.UserError("--template fills commands from the lines of a file; with " + what
                    + " the command comes first: falkon run 'cmd {}' ::: a b");
        }
        generated = given != null ? given : ArgumentSources.array(array);
        generatedCommand = String.join(" ", words);
        if (array != null && generatedCommand.isBlank()) {
            throw new Falkon.UserError("--array " + array + ": a command to run for each index is needed");
        }
        return generated.size();
    }

    /**
     * A rerun of a detached instance makes the same tasks of the same lines: the options that
     * define them (the template, the default wall time) come from the instance's record when not
     * given again, and a different one is refused (it would run other commands under the same lines).
     */
    private void sameTasksAs(InstanceRecords.Record r) {
        String id = r.id();
        if (template == null && r.template() != null) {
            template = r.template();
            System.err.println("rerunning with the template instance " + id + " was submitted with: --template '"
                    + template + "'");
        } else if (template != null && !template.equals(r.template())) {
            throw new Falkon.UserError("--template '" + template + "' is not what instance " + id + " ran its lines "
                    + "with (" + (r.template() == null ? "no template" : "--template '" + r.template() + "'")
                    + "): give the same, or none to use its own");
        }
        if (retriesOnFailure == null && r.retriesOnFailure() != null) {
            retriesOnFailure = r.retriesOnFailure();
        } else if (retriesOnFailure != null && !retriesOnFailure.equals(r.retriesOnFailure())) {
            throw new Falkon.UserError("--retries " + retriesOnFailure + " is not what instance " + id + " ran with ("
                    + (r.retriesOnFailure() == null ? "none" : "--retries " + r.retriesOnFailure())
                    + "): give the same, or none to use its own");
        }
        if (timeoutSeconds == null && r.timeoutSeconds() != null) {
            timeoutSeconds = r.timeoutSeconds();
        } else if (timeoutSeconds != null && !timeoutSeconds.equals(r.timeoutSeconds())) {
            throw new Falkon.UserError("--timeout " + timeoutSeconds + " is not what instance " + id + " ran with ("
                    + (r.timeoutSeconds() == null ? "none" : "--timeout " + r.timeoutSeconds())
                    + "): give the same, or none to use its own");
        }
    }

    /** After {@link #validate}: there is nothing to do (a rerun of a run whose every task succeeded). */
    boolean nothingToRerun(long total) {
        return (rerunFailed != null || (plan != null && !dryRun)) && total == 0;
    }

    /** With --skip-done, which tasks run and why; else null. */
    SkipDone.Plan skipPlan() {
        return plan;
    }

    /**
     * Whether the results file is appended to, not started again: it is the record a rerun reads
     * ({@code --rerun-failed} of the same file, or {@code --skip-done}'s record of earlier runs).
     */
    boolean appendResults() throws IOException {
        if (results == null || !Files.isRegularFile(results)) {
            return false;
        }
        return skipDone || (rerunFailed != null && Files.isSameFile(results, Path.of(rerunFailed)));
    }

    /** Whether only some of FILE's tasks run ({@code --rerun-failed}): task numbers then differ from the file's. */
    boolean selective() {
        return selected != null;
    }


    /** After {@link #validate()}: whether a task reads an https:// source (the Java executor's alone). */
    boolean httpsInputs;

    /**
     * Prints the summary and returns the exit code: 0 iff every task succeeded (none failed, none
     * cancelled, none lost). The tasks' output is on standard output, so Falkon's own summary line
     * goes to standard error (as GNU parallel's does): {@code falkon run tasks.txt > out.txt} keeps
     * only the tasks' output. {@code --json} is asked for, and goes to standard output. A run that
     * was interrupted has said how far it got already.
     */
    int report(Workload.Summary s) {
        if (s.interrupted()) {
            return 130; // 128 + SIGINT, as a shell reports it
        }
        if (json) {
            System.out.println(s.json());
            System.out.flush();
        } else {
            System.err.println(s.text());
            System.err.flush();
        }
        return s.allSucceeded() ? 0 : 1;
    }

    /** The command these options are part of (set by it). */
    CommandSpec command;

    /**
     * This command again, running only what did not succeed: {@code --rerun-failed RESULTS} with the
     * results file this run writes, the other options as given. Null without a results file.
     */
    String rerunCommand() {
        if (results == null || file == null || command == null || command.commandLine().getParseResult() == null) {
            return null; // tasks from the command line (:::, --array) are not a file to rerun
        }
        List<String> args = new ArrayList<>(command.commandLine().getParseResult().originalArgs());
        int at = args.indexOf(command.name());
        List<String> out = new ArrayList<>(List.of("falkon", command.name(), "--rerun-failed", results.toString()));
        for (int i = at + 1; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals("--rerun-failed")) {
                i++; // replaced by ours
            } else if (!a.startsWith("--rerun-failed=")) {
                out.add(a);
            }
        }
        return out.stream().map(CommandTemplate::quote).collect(Collectors.joining(" "));
    }
}
