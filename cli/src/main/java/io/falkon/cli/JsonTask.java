package io.falkon.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.falkon.datacache.fetch.ObjectRef;
import io.falkon.protocol.DataCodec;
import io.falkon.protocol.PersistentWorker;
import io.falkon.protocol.ShellLine;
import io.falkon.protocol.TaskInput;
import io.falkon.protocol.TaskOutput;
import io.falkon.protocol.TaskSpec;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One line of a {@code .jsonl} task file as a task: {@code {"shell": "echo hi"}} or {@code {"args":
 * ["/bin/echo", "hi"]}} with its optional fields (docs/cli.md, "Task files"), every field checked, a bad
 * one refused as {@link TaskFile.BadLine} naming the file, the line and what is wrong. {@link TaskFile}
 * reads the lines and applies the file's defaults; this maps one.
 */
final class JsonTask {
    /** What a line gives: its task (the file's defaults not applied yet) and what it declares and needs. */
    record Parsed(TaskSpec.Builder builder, Workflow.Deps deps, boolean setsRetriesOnFailure, boolean setsTimeout) {
    }

    private static final Set<String> JSON_FIELDS = Set.of("shell", "args", "env", "dir", "timeout", "retries",
            "retriesOnFailure", "name", "after", "priority", "cores", "memory", "disk", "gpus", "resources",
            "inputs", "outputs", "worker", "payload");
    /** A .jsonl "gpus" (a count) and "resources" (name to count): the task's named resources. */
    private void namedResources(JsonNode node, TaskSpec.Builder b) {
        JsonNode gpus = node.get("gpus");
        JsonNode resources = node.get("resources");
        if (gpus == null && resources == null) {
            return;
        }
        java.util.Map<String, Long> wanted = new java.util.LinkedHashMap<>();
        if (resources != null) {
            if (!resources.isObject()) {
                throw new TaskFile.BadLine(name, lineNo, "\"resources\" must be an object of counts, like "
                        + "{\"license\": 1}");
            }
            for (Iterator<java.util.Map.Entry<String, JsonNode>> it = resources.fields(); it.hasNext(); ) {
                java.util.Map.Entry<String, JsonNode> e = it.next();
                wanted.put(e.getKey(), count("resources." + e.getKey(), e.getValue()));
            }
        }
        if (gpus != null) {
            if (wanted.containsKey(io.falkon.protocol.NamedResources.GPUS)) {
                throw new TaskFile.BadLine(name, lineNo, "\"gpus\" is given twice (also in \"resources\")");
            }
            wanted.put(io.falkon.protocol.NamedResources.GPUS, count("gpus", gpus));
        }
        try {
            b.namedResources(wanted);
        } catch (IllegalArgumentException e) {
            throw new TaskFile.BadLine(name, lineNo, e.getMessage());
        }
    }

    private long count(String field, JsonNode v) {
        if (!v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() < 0
                || v.asLong() > io.falkon.protocol.NamedResources.MAX_AMOUNT) {
            throw new TaskFile.BadLine(name, lineNo, "\"" + field + "\" must be a whole number 0.."
                    + io.falkon.protocol.NamedResources.MAX_AMOUNT + ", got " + v);
        }
        return v.asLong();
    }

    /** A .jsonl "memory" or "disk" ({@code field}): whole MiB, or a size with a unit ("512m", "4g"), rounded up to MiB. */
    private long mebibytes(String field, JsonNode size, long max) {
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
            throw new TaskFile.BadLine(name, lineNo, "\"" + field + "\" must be whole MiB or a size like \"512m\" or \"4g\" (up to "
                    + max + " MiB), got " + size);
        }
        return mib;
    }

    private static final Set<String> INPUT_FIELDS = Set.of("id", "source", "size", "checksum", "unpack", "name",
            "readOnly");
    private static final Set<String> OUTPUT_FIELDS = Set.of("path", "id", "temporary", "archive");

    private final String name;
    private final int lineNo;
    /** The line set "retriesOnFailure" itself (0 included): the file's --retries does not apply. */
    private boolean setsRetriesOnFailure;

    private JsonTask(String name, int lineNo) {
        this.name = name;
        this.lineNo = lineNo;
    }

    /** The task of line {@code lineNo} of file {@code name}, whose text is {@code line}. */
    static Parsed parse(String line, String name, int lineNo) {
        return new JsonTask(name, lineNo).parse(line);
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
                throw new TaskFile.BadLine(name, lineNo, "\"payload\" is for a persistent worker: name it with \"worker\"");
            }
            return;
        }
        List<String> command = new ArrayList<>();
        if (worker.isTextual() && !worker.asText().isBlank()) {
            command.addAll(List.of("/bin/sh", "-c", worker.asText())); // as written: "cd d && ./w", "FOO=1 ./w"
        } else if (worker.isArray() && !worker.isEmpty()) {
            for (JsonNode w : worker) {
                if (!w.isTextual()) {
                    throw new TaskFile.BadLine(name, lineNo, "\"worker\" must hold only strings, found " + w);
                }
                command.add(w.asText());
            }
        }
        if (PersistentWorker.problem(command) != null) {
            throw new TaskFile.BadLine(name, lineNo, "\"worker\" must be a command line or a non-empty array of strings "
                    + "(the persistent worker's program first)");
        }
        if (payload != null && !payload.isTextual()) {
            throw new TaskFile.BadLine(name, lineNo, "\"payload\" must be a string");
        }
        b.worker(command, payload == null ? new byte[0] : payload.asText().getBytes(StandardCharsets.UTF_8));
    }

    private Parsed parse(String line) {
        JsonNode node;
        try {
            // the streaming parser alone: an ObjectMapper's set-up (date formats, locale data) was
            // a third of the time a 188-line workflow took to be read and checked (JsonTree)
            node = JsonTree.read(line);
        } catch (JsonProcessingException e) {
            throw new TaskFile.BadLine(name, lineNo, "not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new TaskFile.BadLine(name, lineNo, "not valid JSON: " + e.getMessage());
        }
        if (node == null || !node.isObject()) {
            throw new TaskFile.BadLine(name, lineNo, "expected a JSON object like {\"shell\": \"echo hi\"}");
        }
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!JSON_FIELDS.contains(f)) {
                throw new TaskFile.BadLine(name, lineNo, "unknown field \"" + f + "\" (known: shell, args, env, dir, timeout, "
                        + "retries, retriesOnFailure, name, after, priority, cores, memory, disk, gpus, resources, inputs, outputs, "
                        + "worker, payload)");
            }
        }
        JsonNode shell = node.get("shell");
        JsonNode args = node.get("args");
        if ((shell == null) == (args == null)) {
            throw new TaskFile.BadLine(name, lineNo, "needs exactly one of \"shell\" (a command line) or \"args\" (an array)");
        }
        List<String> argv = new ArrayList<>();
        TaskSpec.Builder b;
        if (shell != null) {
            if (!shell.isTextual() || shell.asText().isBlank()) {
                throw new TaskFile.BadLine(name, lineNo, "\"shell\" must be a non-empty string");
            }
            b = ShellLine.task(shell.asText());
        } else {
            if (!args.isArray() || args.isEmpty()) {
                throw new TaskFile.BadLine(name, lineNo, "\"args\" must be a non-empty array of strings");
            }
            for (JsonNode a : args) {
                if (!a.isTextual()) {
                    throw new TaskFile.BadLine(name, lineNo, "\"args\" must hold only strings, found " + a);
                }
                argv.add(a.asText());
            }
            if (argv.get(0).isEmpty()) {
                throw new TaskFile.BadLine(name, lineNo, "\"args\"[0] (the program) is empty");
            }
            b = TaskSpec.builder(argv);
        }
        JsonNode env = node.get("env");
        if (env != null) {
            if (!env.isObject()) {
                throw new TaskFile.BadLine(name, lineNo, "\"env\" must be an object of strings");
            }
            for (Map.Entry<String, JsonNode> e : env.properties()) {
                if (!e.getValue().isTextual() || e.getKey().isEmpty() || e.getKey().contains("=")) {
                    throw new TaskFile.BadLine(name, lineNo, "\"env\": \"" + e.getKey() + "\" must be a valid name with a string value");
                }
                b.env(e.getKey(), e.getValue().asText());
            }
        }
        JsonNode dir = node.get("dir");
        if (dir != null) {
            if (!dir.isTextual()) {
                throw new TaskFile.BadLine(name, lineNo, "\"dir\" must be a string");
            }
            b.workDir(dir.asText());
        }
        JsonNode priority = node.get("priority");
        if (priority != null) {
            if (!priority.isIntegralNumber() || !priority.canConvertToInt()) {
                throw new TaskFile.BadLine(name, lineNo, "\"priority\" must be a whole number (higher starts first; default 0)");
            }
            b.priority(priority.asInt());
        }
        JsonNode cores = node.get("cores");
        JsonNode memory = node.get("memory");
        if (cores != null || memory != null) {
            if (cores != null && (!cores.isIntegralNumber() || !cores.canConvertToInt() || cores.asInt() < 1
                    || cores.asInt() > TaskSpec.MAX_CORES)) {
                throw new TaskFile.BadLine(name, lineNo, "\"cores\" must be a whole number 1.." + TaskSpec.MAX_CORES
                        + " (slots the task takes at once)");
            }
            b.resources(cores == null ? 1 : cores.asInt(),
                    memory == null ? 0 : mebibytes("memory", memory, TaskSpec.MAX_MEMORY_MIB));
        }
        JsonNode disk = node.get("disk");
        if (disk != null) {
            b.disk(mebibytes("disk", disk, TaskSpec.MAX_DISK_MIB));
        }
        namedResources(node, b);
        worker(node, b);
        JsonNode retries = node.get("retries");
        if (retries != null) {
            if (!retries.canConvertToInt() || retries.asInt() < 0 || retries.asInt() > 255) {
                throw new TaskFile.BadLine(name, lineNo, "\"retries\" must be a whole number 0..255");
            }
            b.retries(retries.asInt());
        }
        JsonNode onFailure = node.get("retriesOnFailure");
        if (onFailure != null) {
            if (!onFailure.canConvertToInt() || onFailure.asInt() < 0 || onFailure.asInt() > 255) {
                throw new TaskFile.BadLine(name, lineNo, "\"retriesOnFailure\" must be a whole number 0..255");
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
        String readOnlyClash = DataCodec.readOnlyClash(in, out, dir != null && !dir.asText().isEmpty());
        if (readOnlyClash != null) {
            throw new TaskFile.BadLine(name, lineNo, readOnlyClash);
        }
        String taskName = null;
        JsonNode nameNode = node.get("name");
        if (nameNode != null) {
            if (!nameNode.isTextual()) {
                throw new TaskFile.BadLine(name, lineNo, "\"name\" must be a string");
            }
            taskName = nameNode.asText();
            try {
                b.name(taskName);
            } catch (IllegalArgumentException e) {
                throw new TaskFile.BadLine(name, lineNo, "\"name\": " + e.getMessage());
            }
        }
        List<String> after = List.of();
        Workflow.Deps deps = null;
        JsonNode afterNode = node.get("after");
        if (afterNode != null) {
            if (!afterNode.isArray()) {
                throw new TaskFile.BadLine(name, lineNo, "\"after\" must be an array of task names");
            }
            List<String> names = new ArrayList<>();
            for (JsonNode a : afterNode) {
                if (!a.isTextual()) {
                    throw new TaskFile.BadLine(name, lineNo, "\"after\" must hold only task names (strings), found " + a);
                }
                names.add(a.asText());
            }
            try {
                b.after(names);
            } catch (IllegalArgumentException e) {
                throw new TaskFile.BadLine(name, lineNo, "\"after\": " + e.getMessage());
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
            deps = new Workflow.Deps(taskName, after, out.stream().map(TaskOutput::id).toList(), ids, sources,
                    out.stream().filter(TaskOutput::temporary).map(TaskOutput::id).toList());
        }
        JsonNode timeout = node.get("timeout");
        if (timeout != null) {
            if (!timeout.isNumber() || timeout.asDouble() <= 0 || timeout.asDouble() > 4_000_000) {
                throw new TaskFile.BadLine(name, lineNo, "\"timeout\" must be a positive number of seconds");
            }
            b.wallTime(Duration.ofMillis(Math.round(timeout.asDouble() * 1000)));
        }
        return new Parsed(b, deps, setsRetriesOnFailure, timeout != null);
    }

    private List<TaskInput> inputs(JsonNode array) {
        if (!array.isArray()) {
            throw new TaskFile.BadLine(name, lineNo, "\"inputs\" must be an array of objects like {\"id\": \"data/x\"}");
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
                        text(in, "checksum", where, ""), unpack, text(in, "name", where, ""),
                        flag(in, "readOnly", where)));
            } catch (IllegalArgumentException e) {
                throw new TaskFile.BadLine(name, lineNo, where + ": " + e.getMessage());
            }
        }
        return out;
    }

    private List<TaskOutput> outputs(JsonNode array) {
        if (!array.isArray()) {
            throw new TaskFile.BadLine(name, lineNo, "\"outputs\" must be an array of objects like {\"path\": \"out.txt\", "
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
                throw new TaskFile.BadLine(name, lineNo, where + ": an output is either \"temporary\" or \"archive\", not both");
            }
            try {
                out.add(new TaskOutput(text(o, "path", where, null), text(o, "id", where, null), temporary, archive));
            } catch (IllegalArgumentException e) {
                throw new TaskFile.BadLine(name, lineNo, where + ": " + e.getMessage());
            }
        }
        return out;
    }

    private boolean flag(JsonNode o, String field, String where) {
        JsonNode v = o.get(field);
        if (v != null && !v.isBoolean()) {
            throw new TaskFile.BadLine(name, lineNo, where + ": \"" + field + "\" must be true or false");
        }
        return v != null && v.booleanValue();
    }

    private void onlyFields(JsonNode node, Set<String> known, String where) {
        if (!node.isObject()) {
            throw new TaskFile.BadLine(name, lineNo, where + " must be an object");
        }
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!known.contains(f)) {
                throw new TaskFile.BadLine(name, lineNo, where + ": unknown field \"" + f + "\" (known: "
                        + String.join(", ", new TreeSet<>(known)) + ")");
            }
        }
    }

    /** A string field; {@code dflt} null means required. */
    private String text(JsonNode node, String field, String where, String dflt) {
        JsonNode v = node.get(field);
        if (v == null) {
            if (dflt == null) {
                throw new TaskFile.BadLine(name, lineNo, where + " needs \"" + field + "\"");
            }
            return dflt;
        }
        if (!v.isTextual() || v.asText().isEmpty() && dflt == null) {
            throw new TaskFile.BadLine(name, lineNo, where + ": \"" + field + "\" must be a non-empty string");
        }
        return v.asText();
    }
}
