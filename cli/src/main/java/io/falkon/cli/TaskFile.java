package io.falkon.cli;

import io.falkon.protocol.Protocol;
import io.falkon.protocol.ShellLine;
import io.falkon.protocol.TaskSpecCodec;
import io.falkon.protocol.TaskSpec;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.function.IntPredicate;

/**
 * A task file, read as a stream. Plain files hold one shell command per line (run with
 * {@code /bin/sh -c}); blank lines and lines starting with {@code #} are skipped. Files ending in
 * {@code .jsonl} hold one JSON task spec per line:
 * {@code {"shell": "echo hi"}} or {@code {"args": ["/bin/echo", "hi"]}}, optionally with
 * {@code "env": {...}}, {@code "dir": "..."} and {@code "timeout": seconds}.
 * A bad line raises {@link BadLine} naming the file and line.
 */
final class TaskFile implements Iterator<TaskFile.Entry>, Closeable {
    /** The file's name, for messages. */
    String name() {
        return name;
    }

    /**
     * One task: its line number, its spec, the line as written (to rerun it), whether that line is
     * JSON (a {@code .jsonl} file), what it declares and needs, and its number: its place among every
     * task of the file, from 1, the same in a rerun that passes over some ({@code {#}}, the results'
     * {@code task}, {@code --output-files}).
     */
    record Entry(int line, TaskSpec spec, String text, boolean json, Workflow.Deps deps, long number) {
        Entry(int line, TaskSpec spec, String text, long number) {
            this(line, spec, text, false, null, number);
        }

        /** What names the task beside its output ({@code --tag}): its line, or for JSON its command. */
        String tag() {
            return json ? command(spec) : text;
        }
    }

    /** A line that is not a valid task. */
    static final class BadLine extends RuntimeException {
        BadLine(String name, int line, String message) {
            super(name + ":" + line + ": " + message);
        }
    }

    /**
     * Files of up to this size and {@link #KEEP_CHECKED_TASKS} tasks are parsed once: the check
     * before the run keeps their tasks, and the run takes them from memory rather than reading and
     * parsing the file again (the second pass cost a 20,000-line run about 45 ms of CPU at its
     * start, beside its first tasks). Larger files are streamed, their tasks never all in memory:
     * the bounds hold what is kept to some tens of MiB (a parsed task holds a few hundred bytes
     * besides its line).
     */
    static final long KEEP_CHECKED_BYTES = 16L << 20;
    static final int KEEP_CHECKED_TASKS = 100_000;

    /**
     * The largest task any dispatcher accepts: {@code --max-task-bytes} goes up to one message less
     * its framing. A line that could only make a larger task is refused when the file is checked,
     * before anything runs ({@code FILE:LINE: reason}); a task under it that a dispatcher's own
     * (lower) limit refuses fails alone, with the dispatcher's reason, and the rest runs.
     */
    static final int MAX_TASK_BYTES = Protocol.DEFAULT_MAX_FRAME_LENGTH - 4096;

    private final String name;
    private final BoundedLines reader;
    private final InputStream input;
    /** The tasks of a file checked before, in place of reading it again (or null); each let go once read. */
    private final List<Entry> kept;
    private int nextKept;
    private final boolean jsonl;
    private final long defaultWallTimeMillis;
    private final int retriesOnFailure;
    private final CommandTemplate template;
    private long taskNumber;
    private int lineNo;
    private Entry next;
    /** Which lines' tasks are run (a rerun passes over what succeeded before); null for all. */
    private IntPredicate selected;
    /** Hears of each task passed over (the check counts them as done producers). */
    private java.util.function.Consumer<Entry> passedOver;
    private int skipped;

    /** How lines become tasks: the wall time of tasks that set none, and a command template (or null). */
    /**
     * How lines become tasks: the wall time of tasks that set none, a command template (or null),
     * and how many times a task that fails on its own runs again ({@code --retries}) when it says nothing.
     */
    record Format(Duration defaultWallTime, CommandTemplate template, int retriesOnFailure) {
        static final Format PLAIN = new Format(null, null, 0);

        Format(Duration defaultWallTime, CommandTemplate template) {
            this(defaultWallTime, template, 0);
        }
    }

    private TaskFile(String name, List<Entry> entries) {
        this.name = name;
        this.reader = null;
        this.input = null;
        this.kept = entries;
        this.jsonl = false;
        this.defaultWallTimeMillis = 0;
        this.retriesOnFailure = 0;
        this.template = null;
        this.sources = null;
        this.command = null;
        this.count = 0;
    }

    /** Tasks made from a command and values ({@code :::}, {@code --array}), not read: null for a file. */
    private final ArgumentSources sources;
    private final String command;
    private final long count;

    /** The tasks {@code sources} make of {@code command}, as a task file: task N on "line" N. */
    static TaskFile generated(ArgumentSources sources, String command, Format format) {
        return new TaskFile(sources, command, format);
    }

    private TaskFile(ArgumentSources sources, String command, Format format) {
        this.name = sources.description();
        this.reader = null;
        this.input = null;
        this.kept = null;
        this.jsonl = false;
        this.defaultWallTimeMillis = format.defaultWallTime() == null ? 0 : format.defaultWallTime().toMillis();
        this.retriesOnFailure = format.retriesOnFailure();
        this.template = null;
        this.sources = sources;
        this.command = command;
        this.count = sources.size();
    }

    /** The tasks {@link #validate} kept, as a task file named {@code name} (it empties the list as it goes). */
    static TaskFile of(String name, List<Entry> entries) {
        return new TaskFile(name, entries);
    }

    private TaskFile(String name, InputStream in, boolean jsonl, Format format) {
        this.name = name;
        this.kept = null;
        this.input = in;
        this.reader = new BoundedLines(new InputStreamReader(in, StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT)),
                MAX_TASK_BYTES);
        this.jsonl = jsonl;
        this.defaultWallTimeMillis = format.defaultWallTime() == null ? 0 : format.defaultWallTime().toMillis();
        this.retriesOnFailure = format.retriesOnFailure();
        this.template = format.template();
        this.sources = null;
        this.command = null;
        this.count = 0;
        if (jsonl && template != null) {
            throw new IllegalArgumentException("--template fills commands from the lines of a plain file; " + name
                    + " is a .jsonl file of tasks");
        }
    }

    /** Opens {@code path}, or standard input for {@code -}. */
    static TaskFile open(String path, Format format) throws IOException {
        if (path.equals("-")) {
            return new TaskFile("<stdin>", System.in, false, format);
        }
        Path p = Path.of(path);
        if (!Files.isRegularFile(p)) {
            throw new IOException("task file " + path + " does not exist or is not a file");
        }
        return new TaskFile(path, Files.newInputStream(p), path.endsWith(".jsonl"), format);
    }

    /**
     * Runs only the tasks on the lines {@code lines} accepts (the others are still checked, and
     * passed over): a rerun of what did not succeed. A template's {@code {#}} still counts them all,
     * so a task keeps its number. Null: every task.
     */
    TaskFile selecting(IntPredicate lines) {
        this.selected = lines;
        return this;
    }

    /**
     * Reads the whole file once to check every line and count the tasks ({@code lines}: the lines
     * whose tasks are run, null for all).
     */
    static Checked validate(String path, Format format, IntPredicate lines) throws IOException {
        return validate(path, format, lines, null);
    }

    /**
     * The same, checking the file's dependencies too ({@link Workflow}); {@code storeRoot} is where
     * inputs that no task produces must be (null: not checked, the store is not this machine's).
     */
    static Checked validate(String path, Format format, IntPredicate lines, Path storeRoot) throws IOException {
        int n = 0;
        boolean https = false;
        Workflow workflow = new Workflow(path, storeRoot);
        try (TaskFile f = open(path, format).selecting(lines)) {
            f.passedOver = e -> workflow.add(e.line(), false, e.deps());
            List<Entry> kept = !path.equals("-") && Files.size(Path.of(path)) <= KEEP_CHECKED_BYTES
                    ? new ArrayList<>() : null;
            while (f.hasNext()) {
                Entry e = f.next();
                if (e.deps() != null) { // a task with inputs has deps: their sources, without decoding its spec again
                    for (String source : e.deps().inputSources()) {
                        https |= source.startsWith("https://");
                    }
                }
                workflow.add(e.line(), true, e.deps());
                if (kept != null) {
                    kept = kept.size() < KEEP_CHECKED_TASKS ? kept : null; // too many: streamed
                }
                if (kept != null) {
                    kept.add(e);
                }
                n++;
            }
            int[] order = workflow.finish(kept != null);
            if (order != null) {
                List<Entry> ordered = new ArrayList<>(kept.size());
                for (int i : order) {
                    ordered.add(kept.get(i));
                }
                kept = ordered;
            }
            if (kept != null && f.rerun.passedOverAny()) {
                // a rerun: after a task that succeeded before, on a later line, is met too
                kept.replaceAll(e -> e.deps() == null ? e : new Entry(e.line(), f.rerun.withoutPassedOver(e.spec()),
                        e.text(), e.json(), e.deps(), e.number()));
            }
            return new Checked(n, f.skipped, https, kept);
        }
    }

    /**
     * What a check of the whole file found: its tasks (less those passed over), the tasks passed
     * over, whether any reads an https:// source, and the tasks themselves for a file within
     * {@link #KEEP_CHECKED_BYTES} and {@link #KEEP_CHECKED_TASKS} (null for a larger one).
     */
    record Checked(int tasks, int skipped, boolean httpsInputs, List<Entry> entries) {
    }

    @Override
    public boolean hasNext() {
        if (next == null) {
            next = read();
        }
        return next != null;
    }

    @Override
    public Entry next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        Entry e = next;
        next = null;
        return e;
    }

    private Entry read() {
        if (kept != null) {
            return nextKept < kept.size() ? kept.set(nextKept++, null) : null;
        }
        if (sources != null) {
            if (taskNumber == count) {
                return null;
            }
            long number = ++taskNumber;
            lineNo = (int) number;
            TaskSpec spec = withDefaults(sources.task(command, number));
            String text = TaskFile.command(spec);
            return sized(new Entry(lineNo, spec, text, number), 2L * text.length());
        }
        while (true) {
            String line;
            try {
                line = reader.next();
            } catch (CharacterCodingException e) {
                throw new BadLine(name, lineNo + 1, "not valid UTF-8");
            } catch (BoundedLines.TooLong e) {
                throw new BadLine(name, lineNo + 1, "a line of " + e.chars + " characters: no task may be over "
                        + MAX_TASK_BYTES + " bytes (what one message to a dispatcher carries)");
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + name, e);
            }
            if (line == null) {
                return null;
            }
            lineNo++;
            String trimmed = line.strip();
            if (trimmed.isEmpty() || trimmed.startsWith("#")) {
                continue;
            }
            if (line.indexOf('\0') >= 0) {
                throw new BadLine(name, lineNo, "contains a NUL character");
            }
            long number = ++taskNumber;
            Entry e = entry(line, trimmed, number);
            if (selected == null || selected.test(lineNo)) {
                return e;
            }
            skipped++;
            rerun.passedOver(e.deps());
            if (passedOver != null) {
                passedOver.accept(e);
            }
        }
    }

    private Entry entry(String line, String trimmed, long number) {
        if (jsonl) {
            JsonTask.Parsed p = JsonTask.parse(trimmed, name, lineNo);
            setsRetriesOnFailure = p.setsRetriesOnFailure();
            TaskSpec spec = p.setsTimeout() ? withRetries(p.builder()).build() : withDefaults(p.builder());
            Workflow.Deps d = p.deps();
            return sized(new Entry(lineNo, d == null ? spec : rerun.withoutDone(spec, d), trimmed, true, d, number),
                    line.length());
        }
        if (template == null) {
            return sized(new Entry(lineNo, withDefaults(ShellLine.task(line)), trimmed, number), line.length());
        }
        String filled = template.fill(line, number);
        return sized(new Entry(lineNo, withDefaults(ShellLine.task(filled).env("FALKON_LINE", trimmed)
                .env("FALKON_TASK_NUMBER", Long.toString(number))), trimmed, number), filled.length() + line.length());
    }

    /**
     * The entry, unless its task is larger than any dispatcher accepts. A task holds its text at most
     * twice (its words and, run without the shell, its line), each character in at most 3 UTF-8
     * bytes: only a task of long lines can come near the bound and is encoded to be measured.
     */
    private Entry sized(Entry e, long chars) {
        if (6 * chars + 4096 <= MAX_TASK_BYTES) {
            return e;
        }
        int bytes = TaskSpecCodec.encode(e.spec()).length;
        if (bytes > MAX_TASK_BYTES) {
            throw new BadLine(name, lineNo, "its task is " + bytes + " bytes encoded: no dispatcher accepts a task "
                    + "over " + MAX_TASK_BYTES + " bytes (falkon dispatcher --max-task-bytes; 1 MiB by default)");
        }
        return e;
    }

    private TaskSpec withDefaults(TaskSpec.Builder b) {
        if (defaultWallTimeMillis > 0) {
            b.wallTime(Duration.ofMillis(defaultWallTimeMillis));
        }
        return withRetries(b).build();
    }

    /** The file's --retries, unless the task set its own. */
    private TaskSpec.Builder withRetries(TaskSpec.Builder b) {
        if (retriesOnFailure > 0 && !setsRetriesOnFailure) {
            b.retriesOnFailure(retriesOnFailure);
        }
        setsRetriesOnFailure = false;
        return b;
    }

    /** The line being parsed set "retriesOnFailure" itself (0 included). */
    private boolean setsRetriesOnFailure;
    /** In a rerun: what was passed over (its names are met: a task after one runs without waiting for it). */
    private final RerunSelection rerun = new RerunSelection();

    /**
     * A task's command as a shell line, as {@code --dry-run} prints it and {@code --tag} names a
     * {@code .jsonl} task: its line when it was split from one, the shell's command when it runs
     * through the shell, else its program and arguments, quoted where they need it.
     */
    static String command(TaskSpec spec) {
        String line = ShellLine.of(spec);
        if (line != null) {
            return line;
        }
        List<String> argv = spec.argv();
        if (argv.size() == 3 && argv.get(0).equals("/bin/sh") && argv.get(1).equals("-c")) {
            return argv.get(2);
        }
        StringBuilder sb = new StringBuilder();
        for (String a : argv) {
            sb.append(sb.length() == 0 ? "" : " ").append(CommandTemplate.quote(a));
        }
        return sb.toString();
    }

    @Override
    public void close() throws IOException {
        if (input != null && !name.equals("<stdin>")) {
            input.close();
        }
    }
}
