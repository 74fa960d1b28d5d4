package io.falkon.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import io.falkon.datacache.ObjectRef;
import io.falkon.protocol.TaskInput;
import io.falkon.protocol.TaskOutput;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.PersistentWorker;
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
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.TreeSet;
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
    /**
     * A reader bound to JsonNode once (ObjectMapper.readTree resolves the type again for every
     * line), made with the first .jsonl line, not for every run: Jackson takes 20 ms to set up.
     */
    private static final class Json {
        static final ObjectReader JSON = new ObjectMapper().readerFor(JsonNode.class);
    }
    private static final Set<String> JSON_FIELDS = Set.of("shell", "args", "env", "dir", "timeout", "retries",
            "retriesOnFailure", "name", "after", "priority", "cores", "memory", "disk",
            "inputs", "outputs", "worker", "payload");
    /** A .jsonl "memory" or "disk" ({@code field}): whole MiB, or a size with a unit ("512m", "4g"), rounded up to MiB. */
    private static long mebibytes(String field, JsonNode size, long max, String name, int lineNo) {
        long mib = -1;
        if (size.isIntegralNumber() && size.canConvertToLong()) {
            mib = size.asLong();
        } else if (size.isTextual()) {
            try {
                mib = (io.falkon.executor.Bytes.parse(size.asText()) + (1 << 20) - 1) >> 20;
            } catch (IllegalArgumentException e) {
                mib = -1;
            }
        }
        if (mib < 0 || mib > max) {
            throw new BadLine(name, lineNo, "\"" + field + "\" must be whole MiB or a size like \"512m\" or \"4g\" (up to "
                    + max + " MiB), got " + size);
        }
        return mib;
    }

    private static final Set<String> INPUT_FIELDS = Set.of("id", "source", "size", "checksum", "unpack", "name");
    private static final Set<String> OUTPUT_FIELDS = Set.of("path", "id", "temporary", "archive");

    /** The file's name, for messages. */
    String name() {
        return name;
    }

    /**
     * One task: its line number, its spec, the line as written (to rerun it), and whether that line
     * is JSON (a {@code .jsonl} file).
     */
    record Entry(int line, TaskSpec spec, String text, boolean json, Workflow.Deps deps) {
        Entry(int line, TaskSpec spec, String text) {
            this(line, spec, text, false, null);
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
                for (var in : e.spec().inputs()) {
                    https |= in.source().startsWith("https://");
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
            if (kept != null && !f.doneNames.isEmpty()) {
                // a rerun: after a task that succeeded before, on a later line, is met too
                kept.replaceAll(e -> e.deps() == null ? e : new Entry(e.line(), withoutAfter(e.spec(), f.doneNames),
                        e.text(), e.json(), e.deps()));
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
            if (e.deps() != null && e.deps().name() != null) {
                doneNames.add(e.deps().name());
            }
            if (passedOver != null) {
                passedOver.accept(e);
            }
        }
    }

    private Entry entry(String line, String trimmed, long number) {
        if (jsonl) {
            TaskSpec spec = parseJson(trimmed);
            Workflow.Deps d = parsedDeps;
            parsedDeps = null;
            return sized(new Entry(lineNo, d == null ? spec : withoutDone(spec, d), trimmed, true, d), line.length());
        }
        if (template == null) {
            return sized(new Entry(lineNo, withDefaults(ShellLine.task(line)), trimmed), line.length());
        }
        String filled = template.fill(line, number);
        return sized(new Entry(lineNo, withDefaults(ShellLine.task(filled).env("FALKON_LINE", trimmed)
                .env("FALKON_TASK_NUMBER", Long.toString(number))), trimmed), filled.length() + line.length());
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
    /** What the line being parsed declares and needs (workflows), or null. */
    private Workflow.Deps parsedDeps;
    /** In a rerun: names of the tasks passed over (they succeeded before: running after them is met). */
    private final Set<String> doneNames = new java.util.HashSet<>();

    /** The task without the {@code after} names of tasks that succeeded before and do not run now (a rerun). */
    private TaskSpec withoutDone(TaskSpec spec, Workflow.Deps d) {
        if (doneNames.isEmpty() || d.after().isEmpty() || d.after().stream().noneMatch(doneNames::contains)) {
            return spec;
        }
        return withoutAfter(spec, doneNames);
    }

    /** {@code spec} running after none of {@code done}. */
    static TaskSpec withoutAfter(TaskSpec spec, Set<String> done) {
        List<String> keep = spec.after().stream().filter(n -> !done.contains(n)).toList();
        TaskSpec cleared = new TaskSpec(spec.argv(), spec.env(), spec.workDir(), spec.wallTimeMillis(),
                spec.ext().stream().filter(f -> f.tag() != io.falkon.protocol.ExtTags.AFTER).toList());
        return keep.isEmpty() ? cleared : cleared.toBuilder().after(keep).build();
    }

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

    /**
     * A .jsonl "worker": the task runs in a persistent worker (docs/protocol.md section 9) started
     * from this command (an array, or a string run by /bin/sh), handed the task's args and its
     * "payload" (a string, sent as UTF-8).
     */
    private void worker(JsonNode node, TaskSpec.Builder b) {
        JsonNode worker = node.get("worker");
        JsonNode payload = node.get("payload");
        if (worker == null) {
            if (payload != null) {
                throw new BadLine(name, lineNo, "\"payload\" is for a persistent worker: name it with \"worker\"");
            }
            return;
        }
        List<String> command = new ArrayList<>();
        if (worker.isTextual() && !worker.asText().isBlank()) {
            command.addAll(List.of("/bin/sh", "-c", worker.asText())); // as written: "cd d && ./w", "FOO=1 ./w"
        } else if (worker.isArray() && !worker.isEmpty()) {
            for (JsonNode w : worker) {
                if (!w.isTextual()) {
                    throw new BadLine(name, lineNo, "\"worker\" must hold only strings, found " + w);
                }
                command.add(w.asText());
            }
        }
        if (PersistentWorker.problem(command) != null) {
            throw new BadLine(name, lineNo, "\"worker\" must be a command line or a non-empty array of strings "
                    + "(the persistent worker's program first)");
        }
        if (payload != null && !payload.isTextual()) {
            throw new BadLine(name, lineNo, "\"payload\" must be a string");
        }
        b.worker(command, payload == null ? new byte[0] : payload.asText().getBytes(StandardCharsets.UTF_8));
    }

    private TaskSpec parseJson(String line) {
        JsonNode node;
        try {
            node = Json.JSON.readValue(line);
        } catch (JsonProcessingException e) {
            throw new BadLine(name, lineNo, "not valid JSON: " + e.getOriginalMessage());
        }
        if (node == null || !node.isObject()) {
            throw new BadLine(name, lineNo, "expected a JSON object like {\"shell\": \"echo hi\"}");
        }
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!JSON_FIELDS.contains(f)) {
                throw new BadLine(name, lineNo, "unknown field \"" + f + "\" (known: shell, args, env, dir, timeout, "
                        + "retries, retriesOnFailure, name, after, priority, cores, memory, disk, inputs, outputs, worker, payload)");
            }
        }
        JsonNode shell = node.get("shell");
        JsonNode args = node.get("args");
        if ((shell == null) == (args == null)) {
            throw new BadLine(name, lineNo, "needs exactly one of \"shell\" (a command line) or \"args\" (an array)");
        }
        List<String> argv = new ArrayList<>();
        TaskSpec.Builder b;
        if (shell != null) {
            if (!shell.isTextual() || shell.asText().isBlank()) {
                throw new BadLine(name, lineNo, "\"shell\" must be a non-empty string");
            }
            b = ShellLine.task(shell.asText());
        } else {
            if (!args.isArray() || args.isEmpty()) {
                throw new BadLine(name, lineNo, "\"args\" must be a non-empty array of strings");
            }
            for (JsonNode a : args) {
                if (!a.isTextual()) {
                    throw new BadLine(name, lineNo, "\"args\" must hold only strings, found " + a);
                }
                argv.add(a.asText());
            }
            if (argv.get(0).isEmpty()) {
                throw new BadLine(name, lineNo, "\"args\"[0] (the program) is empty");
            }
            b = TaskSpec.builder(argv);
        }
        JsonNode env = node.get("env");
        if (env != null) {
            if (!env.isObject()) {
                throw new BadLine(name, lineNo, "\"env\" must be an object of strings");
            }
            for (Map.Entry<String, JsonNode> e : env.properties()) {
                if (!e.getValue().isTextual() || e.getKey().isEmpty() || e.getKey().contains("=")) {
                    throw new BadLine(name, lineNo, "\"env\": \"" + e.getKey() + "\" must be a valid name with a string value");
                }
                b.env(e.getKey(), e.getValue().asText());
            }
        }
        JsonNode dir = node.get("dir");
        if (dir != null) {
            if (!dir.isTextual()) {
                throw new BadLine(name, lineNo, "\"dir\" must be a string");
            }
            b.workDir(dir.asText());
        }
        JsonNode priority = node.get("priority");
        if (priority != null) {
            if (!priority.isIntegralNumber() || !priority.canConvertToInt()) {
                throw new BadLine(name, lineNo, "\"priority\" must be a whole number (higher starts first; default 0)");
            }
            b.priority(priority.asInt());
        }
        JsonNode cores = node.get("cores");
        JsonNode memory = node.get("memory");
        if (cores != null || memory != null) {
            if (cores != null && (!cores.isIntegralNumber() || !cores.canConvertToInt() || cores.asInt() < 1
                    || cores.asInt() > TaskSpec.MAX_CORES)) {
                throw new BadLine(name, lineNo, "\"cores\" must be a whole number 1.." + TaskSpec.MAX_CORES
                        + " (slots the task takes at once)");
            }
            b.resources(cores == null ? 1 : cores.asInt(),
                    memory == null ? 0 : mebibytes("memory", memory, TaskSpec.MAX_MEMORY_MIB, name, lineNo));
        }
        JsonNode disk = node.get("disk");
        if (disk != null) {
            b.disk(mebibytes("disk", disk, TaskSpec.MAX_DISK_MIB, name, lineNo));
        }
        worker(node, b);
        JsonNode retries = node.get("retries");
        if (retries != null) {
            if (!retries.canConvertToInt() || retries.asInt() < 0 || retries.asInt() > 255) {
                throw new BadLine(name, lineNo, "\"retries\" must be a whole number 0..255");
            }
            b.retries(retries.asInt());
        }
        JsonNode onFailure = node.get("retriesOnFailure");
        if (onFailure != null) {
            if (!onFailure.canConvertToInt() || onFailure.asInt() < 0 || onFailure.asInt() > 255) {
                throw new BadLine(name, lineNo, "\"retriesOnFailure\" must be a whole number 0..255");
            }
            b.retriesOnFailure(onFailure.asInt());
            setsRetriesOnFailure = true;
        }
        JsonNode inputs = node.get("inputs");
        List<TaskInput> in = inputs == null ? List.of() : inputs(inputs);
        b.inputs(in);
        JsonNode outputs = node.get("outputs");
        List<TaskOutput> out = outputs == null ? List.of() : outputs(outputs);
        b.outputs(out);
        String taskName = null;
        JsonNode nameNode = node.get("name");
        if (nameNode != null) {
            if (!nameNode.isTextual()) {
                throw new BadLine(name, lineNo, "\"name\" must be a string");
            }
            taskName = nameNode.asText();
            try {
                b.name(taskName);
            } catch (IllegalArgumentException e) {
                throw new BadLine(name, lineNo, "\"name\": " + e.getMessage());
            }
        }
        List<String> after = List.of();
        JsonNode afterNode = node.get("after");
        if (afterNode != null) {
            if (!afterNode.isArray()) {
                throw new BadLine(name, lineNo, "\"after\" must be an array of task names");
            }
            List<String> names = new ArrayList<>();
            for (JsonNode a : afterNode) {
                if (!a.isTextual()) {
                    throw new BadLine(name, lineNo, "\"after\" must hold only task names (strings), found " + a);
                }
                names.add(a.asText());
            }
            try {
                b.after(names);
            } catch (IllegalArgumentException e) {
                throw new BadLine(name, lineNo, "\"after\": " + e.getMessage());
            }
            after = names;
        }
        if (taskName != null || !after.isEmpty() || !out.isEmpty() || !in.isEmpty()) {
            List<String> ids = new ArrayList<>(in.size());
            List<String> sources = new ArrayList<>(in.size());
            for (TaskInput i : in) {
                ids.add(i.id());
                sources.add(i.source());
            }
            parsedDeps = new Workflow.Deps(taskName, after, out.stream().map(TaskOutput::id).toList(), ids, sources);
        }
        JsonNode timeout = node.get("timeout");
        if (timeout != null) {
            if (!timeout.isNumber() || timeout.asDouble() <= 0 || timeout.asDouble() > 4_000_000) {
                throw new BadLine(name, lineNo, "\"timeout\" must be a positive number of seconds");
            }
            b.wallTime(Duration.ofMillis(Math.round(timeout.asDouble() * 1000)));
            return withRetries(b).build();
        }
        return withDefaults(b);
    }

    private List<TaskInput> inputs(JsonNode array) {
        if (!array.isArray()) {
            throw new BadLine(name, lineNo, "\"inputs\" must be an array of objects like {\"id\": \"data/x\"}");
        }
        List<TaskInput> out = new ArrayList<>();
        int i = 0;
        for (JsonNode in : array) {
            String where = "\"inputs\"[" + i++ + "]";
            onlyFields(in, INPUT_FIELDS, where);
            String id = text(in, "id", where, null);
            long size = in.has("size") ? in.get("size").asLong(-1) : -1;
            try {
                int unpack = ObjectRef.Unpack.parse(text(in, "unpack", where, "")).ordinal();
                out.add(new TaskInput(id, text(in, "source", where, id), size,
                        text(in, "checksum", where, ""), unpack, text(in, "name", where, "")));
            } catch (IllegalArgumentException e) {
                throw new BadLine(name, lineNo, where + ": " + e.getMessage());
            }
        }
        return out;
    }

    private List<TaskOutput> outputs(JsonNode array) {
        if (!array.isArray()) {
            throw new BadLine(name, lineNo, "\"outputs\" must be an array of objects like {\"path\": \"out.txt\", "
                    + "\"id\": \"results/1\"}");
        }
        List<TaskOutput> out = new ArrayList<>();
        int i = 0;
        for (JsonNode o : array) {
            String where = "\"outputs\"[" + i++ + "]";
            onlyFields(o, OUTPUT_FIELDS, where);
            boolean temporary = flag(o, "temporary", where);
            boolean archive = flag(o, "archive", where);
            if (temporary && archive) {
                throw new BadLine(name, lineNo, where + ": an output is either \"temporary\" or \"archive\", not both");
            }
            try {
                out.add(new TaskOutput(text(o, "path", where, null), text(o, "id", where, null), temporary, archive));
            } catch (IllegalArgumentException e) {
                throw new BadLine(name, lineNo, where + ": " + e.getMessage());
            }
        }
        return out;
    }

    private boolean flag(JsonNode o, String field, String where) {
        JsonNode v = o.get(field);
        if (v != null && !v.isBoolean()) {
            throw new BadLine(name, lineNo, where + ": \"" + field + "\" must be true or false");
        }
        return v != null && v.booleanValue();
    }

    private void onlyFields(JsonNode node, Set<String> known, String where) {
        if (!node.isObject()) {
            throw new BadLine(name, lineNo, where + " must be an object");
        }
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!known.contains(f)) {
                throw new BadLine(name, lineNo, where + ": unknown field \"" + f + "\" (known: "
                        + String.join(", ", new TreeSet<>(known)) + ")");
            }
        }
    }

    /** A string field; {@code dflt} null means required. */
    private String text(JsonNode node, String field, String where, String dflt) {
        JsonNode v = node.get(field);
        if (v == null) {
            if (dflt == null) {
                throw new BadLine(name, lineNo, where + " needs \"" + field + "\"");
            }
            return dflt;
        }
        if (!v.isTextual() || v.asText().isEmpty() && dflt == null) {
            throw new BadLine(name, lineNo, where + ": \"" + field + "\" must be a non-empty string");
        }
        return v.asText();
    }

    @Override
    public void close() throws IOException {
        if (input != null && !name.equals("<stdin>")) {
            input.close();
        }
    }
}
