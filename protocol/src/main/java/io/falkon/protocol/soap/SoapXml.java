package io.falkon.protocol.soap;

import io.falkon.protocol.Execution;
import io.falkon.protocol.DataCodec;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.ExtTags;
import io.falkon.protocol.ShellLine;
import io.falkon.protocol.LogSafe;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskInput;
import io.falkon.protocol.TaskOutput;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskStatus;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.xml.stream.XMLStreamConstants;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamReader;
import javax.xml.stream.XMLStreamWriter;

/**
 * The XML forms of a task and of a result in the Web Services interface ({@code docs/ws.md}, the
 * types of {@code falkon.wsdl}), read and written with StAX so that a bundle of 10,000 tasks streams
 * through without building a tree. Shared by the dispatcher's SOAP service and the client's WS
 * transport so that both sides agree on every element.
 */
public final class SoapXml {
    /** The target namespace of the service's messages and types. */
    public static final String NS = "urn:falkon:ws:1";
    /**
     * The prefix every element is written with; whoever writes the enclosing element declares it
     * ({@code xmlns:f="urn:falkon:ws:1"}), so writers need no namespace repairing.
     */
    public static final String PREFIX = "f";

    /** An optional boolean attribute of an element ({@code true} or {@code false}). */
    private static boolean flag(javax.xml.stream.XMLStreamReader r, String attribute, String where) {
        String v = r.getAttributeValue(null, attribute);
        if (v != null && !v.equals("true") && !v.equals("false")) {
            throw new SoapInputException(where + ": " + attribute + "=\"" + v + "\" must be true or false");
        }
        return "true".equals(v);
    }

    private static final String[] UNPACK = {"none", "gzip", "tar", "tar.gz"};

    private SoapXml() {
    }

    /** A task as read from a {@code <task>} element: its optional id and what to run. */
    public record ParsedTask(Long id, TaskSpec spec) {
    }

    // ---- tasks -----------------------------------------------------------------------------

    /** Writes {@code <task id="…">…</task>}; {@code id} may be null (the service assigns one). */
    public static void writeTask(XMLStreamWriter w, Long id, TaskSpec spec) throws XMLStreamException {
        w.writeStartElement(PREFIX, "task", NS);
        if (id != null) {
            w.writeAttribute("id", Long.toString(id));
        }
        List<String> argv = spec.argv();
        text(w, "command", argv.get(0));
        for (int i = 1; i < argv.size(); i++) {
            text(w, "arg", argv.get(i));
        }
        for (var e : spec.env().entrySet()) {
            w.writeStartElement(PREFIX, "env", NS);
            w.writeAttribute("name", e.getKey());
            w.writeCharacters(xmlSafe(e.getValue()));
            w.writeEndElement();
        }
        if (!spec.workDir().isEmpty()) {
            text(w, "workDir", spec.workDir());
        }
        if (spec.wallTimeMillis() > 0) {
            text(w, "wallTimeMillis", Long.toString(spec.wallTimeMillis()));
        }
        if (spec.retries() >= 0) {
            text(w, "retries", Integer.toString(spec.retries()));
        }
        for (TaskInput in : spec.inputs()) {
            w.writeStartElement(PREFIX, "input", NS);
            w.writeAttribute("id", in.id());
            if (!in.source().isEmpty()) {
                w.writeAttribute("source", in.source());
            }
            if (in.size() >= 0) {
                w.writeAttribute("size", Long.toString(in.size()));
            }
            if (!in.checksum().isEmpty()) {
                w.writeAttribute("checksum", in.checksum());
            }
            if (in.unpack() != TaskInput.AS_STORED) {
                w.writeAttribute("unpack", UNPACK[in.unpack()]);
            }
            if (!in.name().isEmpty()) {
                w.writeAttribute("name", in.name());
            }
            if (in.readOnly()) {
                w.writeAttribute("readOnly", "true");
            }
            w.writeEndElement();
        }
        for (TaskOutput out : spec.outputs()) {
            w.writeStartElement(PREFIX, "output", NS);
            w.writeAttribute("path", out.path());
            w.writeAttribute("id", out.id());
            if (out.temporary()) {
                w.writeAttribute("temporary", "true");
            }
            if (out.archived()) {
                w.writeAttribute("archive", "true");
            }
            w.writeEndElement();
        }
        String line = ShellLine.of(spec);
        if (line != null) {
            text(w, "shellLine", line); // the shell's result when the program cannot start, as over TCP
        }
        if (spec.retriesOnFailure() > 0) {
            text(w, "retriesOnFailure", Integer.toString(spec.retriesOnFailure()));
        }
        if (spec.name() != null) {
            text(w, "name", spec.name());
        }
        for (String a : spec.after()) {
            text(w, "after", a);
        }
        if (spec.priority() != 0) {
            text(w, "priority", Integer.toString(spec.priority()));
        }
        if (spec.ext().stream().anyMatch(f -> f.tag() == ExtTags.RESOURCES)) {
            text(w, "cores", Integer.toString(spec.cores()));
            if (spec.memoryMiB() > 0) {
                text(w, "memoryMiB", Long.toString(spec.memoryMiB()));
            }
        }
        if (spec.diskMiB() > 0) {
            text(w, "diskMiB", Long.toString(spec.diskMiB()));
        }
        io.falkon.protocol.NamedResources named = spec.namedResources();
        for (int i = 0; named != null && i < named.size(); i++) {
            if (named.name(i).equals(io.falkon.protocol.NamedResources.GPUS)) {
                text(w, "gpus", Long.toString(named.amount(i)));
            } else {
                w.writeStartElement(PREFIX, "resource", NS);
                w.writeAttribute("name", named.name(i));
                w.writeCharacters(Long.toString(named.amount(i)));
                w.writeEndElement();
            }
        }
        io.falkon.protocol.PersistentWorker worker = spec.worker();
        if (worker != null) {
            w.writeStartElement(PREFIX, "worker", NS);
            for (String word : worker.command()) {
                text(w, "arg", word);
            }
            w.writeEndElement();
            if (worker.payload().length > 0) {
                text(w, "payload", java.util.Base64.getEncoder().encodeToString(worker.payload()));
            }
        }
        w.writeEndElement();
    }

    /**
     * Reads the {@code <task>} element the reader is positioned on, leaving it on its end tag.
     *
     * @param op    the operation, to name in an error
     * @param index the task's position in the bundle, to name in an error
     * @throws SoapInputException naming the task and the element when it is not a valid task
     */
    public static ParsedTask readTask(XMLStreamReader r, String op, int index) throws XMLStreamException {
        try {
            return readTask(r);
        } catch (SoapInputException p) {
            // the task's name is only put together when something is wrong with it
            throw new SoapInputException(op + ": task " + index + " of the bundle" + p.getMessage());
        }
    }

    /** Reads a task; a problem's message starts with ": " for the caller to put the task's name before. */
    private static ParsedTask readTask(XMLStreamReader r) throws XMLStreamException {
        final String where = "";
        Long id = null;
        String idText = r.getAttributeValue(null, "id");
        if (idText != null) {
            id = parseLong(idText, where + ": attribute id");
            if (id < 0) {
                throw new SoapInputException(where + ": attribute id must not be negative, got " + idText);
            }
        }
        List<String> argv = new ArrayList<>(4);
        String command = null;
        Map<String, String> env = null;
        String workDir = null;
        long wallTime = 0;
        int retries = -1;
        List<TaskInput> inputs = null;
        List<TaskOutput> outputs = null;
        String shellLine = null;
        int retriesOnFailure = 0;
        String taskName = null;
        List<String> after = null;
        int priority = 0;
        long cores = 0;
        long memoryMiB = -1;
        long diskMiB = 0;
        java.util.Map<String, Long> named = null;
        List<String> worker = null;
        byte[] payload = null;
        while (r.nextTag() == XMLStreamConstants.START_ELEMENT) {
            String name = r.getLocalName();
            switch (name) {
                case "command" -> {
                    if (command != null) {
                        throw new SoapInputException(where + ": more than one <command>");
                    }
                    command = r.getElementText();
                }
                case "arg" -> argv.add(r.getElementText());
                case "env" -> {
                    String var = r.getAttributeValue(null, "name");
                    if (var == null || var.isEmpty() || var.indexOf('=') >= 0) {
                        throw new SoapInputException(where + ": <env> needs a name attribute without '=', got "
                                + (var == null ? "none" : "'" + var + "'"));
                    }
                    if (env == null) {
                        env = new LinkedHashMap<>();
                    }
                    env.put(var, r.getElementText());
                }
                case "workDir" -> workDir = r.getElementText();
                case "wallTimeMillis" -> {
                    wallTime = parseLong(r.getElementText(), where + ": <wallTimeMillis>");
                    if (wallTime < 0 || wallTime > TaskSpec.MAX_WALL_TIME_MILLIS) {
                        throw new SoapInputException(where + ": <wallTimeMillis> " + wallTime + " is out of range 0.."
                                + TaskSpec.MAX_WALL_TIME_MILLIS);
                    }
                }
                case "retries" -> {
                    long n = parseLong(r.getElementText(), where + ": <retries>");
                    if (n < 0 || n > 255) {
                        throw new SoapInputException(where + ": <retries> " + n + " is out of range 0..255");
                    }
                    retries = (int) n;
                }
                case "input" -> {
                    (inputs == null ? inputs = new ArrayList<>(2) : inputs).add(readInput(r, where));
                    skipToEnd(r, where + ": <input>");
                }
                case "output" -> {
                    String path = r.getAttributeValue(null, "path");
                    String oid = r.getAttributeValue(null, "id");
                    if (path == null || path.isEmpty() || oid == null || oid.isEmpty()) {
                        throw new SoapInputException(where + ": <output> needs the attributes path and id");
                    }
                    boolean temporary = flag(r, "temporary", where);
                    boolean archive = flag(r, "archive", where);
                    if (temporary && archive) {
                        throw new SoapInputException(where + ": an <output> is either temporary or archive, not both");
                    }
                    (outputs == null ? outputs = new ArrayList<>(1) : outputs).add(new TaskOutput(path, oid,
                            temporary, archive));
                    skipToEnd(r, where + ": <output>");
                }
                case "shellLine" -> {
                    if (shellLine != null) {
                        throw new SoapInputException(where + ": more than one <shellLine>");
                    }
                    shellLine = r.getElementText();
                    if (shellLine.isBlank()) {
                        throw new SoapInputException(where + ": <shellLine> is empty");
                    }
                }
                case "retriesOnFailure" -> retriesOnFailure = (int) parseBounded(r.getElementText(),
                        where + ": <retriesOnFailure>", 0, 255);
                case "name" -> {
                    if (taskName != null) {
                        throw new SoapInputException(where + ": more than one <name>");
                    }
                    taskName = r.getElementText();
                    String problem = DataCodec.nameProblem(taskName);
                    if (problem != null) {
                        throw new SoapInputException(where + ": <name>: " + problem);
                    }
                }
                case "after" -> {
                    String a = r.getElementText();
                    String problem = DataCodec.nameProblem(a);
                    if (problem != null) {
                        throw new SoapInputException(where + ": <after>: " + problem);
                    }
                    (after == null ? after = new ArrayList<>(2) : after).add(a);
                }
                case "priority" -> priority = (int) parseBounded(r.getElementText(), where + ": <priority>",
                        Integer.MIN_VALUE, Integer.MAX_VALUE);
                case "cores" -> cores = parseBounded(r.getElementText(), where + ": <cores>", 1, TaskSpec.MAX_CORES);
                case "memoryMiB" -> memoryMiB = parseBounded(r.getElementText(), where + ": <memoryMiB>", 0,
                        TaskSpec.MAX_MEMORY_MIB);
                case "diskMiB" -> diskMiB = parseBounded(r.getElementText(), where + ": <diskMiB>", 0,
                        TaskSpec.MAX_DISK_MIB);
                case "gpus", "resource" -> {
                    String rname = name.equals("gpus") ? io.falkon.protocol.NamedResources.GPUS
                            : r.getAttributeValue(null, "name");
                    String problem = io.falkon.protocol.NamedResources.nameProblem(rname);
                    if (problem != null) {
                        throw new SoapInputException(where + ": <" + name + ">: " + problem);
                    }
                    long amount = parseBounded(r.getElementText(), where + ": <" + name + ">", 0,
                            io.falkon.protocol.NamedResources.MAX_AMOUNT);
                    if (named == null) {
                        named = new java.util.LinkedHashMap<>();
                    }
                    if (named.put(rname, amount) != null) {
                        throw new SoapInputException(where + ": resource " + rname + " is given twice");
                    }
                }
                case "worker" -> {
                    if (worker != null) {
                        throw new SoapInputException(where + ": more than one <worker>");
                    }
                    worker = new ArrayList<>();
                    while (r.nextTag() == XMLStreamConstants.START_ELEMENT) {
                        if (!r.getLocalName().equals("arg")) {
                            throw new SoapInputException(where + ": <worker> holds only <arg> elements, found <"
                                    + r.getLocalName() + ">");
                        }
                        worker.add(r.getElementText());
                    }
                    String problem = io.falkon.protocol.PersistentWorker.problem(worker);
                    if (problem != null) {
                        throw new SoapInputException(where + ": <worker>: " + problem);
                    }
                }
                case "payload" -> {
                    try {
                        payload = java.util.Base64.getMimeDecoder().decode(r.getElementText().strip());
                    } catch (IllegalArgumentException e) {
                        throw new SoapInputException(where + ": <payload> is not base64: " + e.getMessage());
                    }
                }
                default -> throw new SoapInputException(where + ": unknown element <" + name + "> (expected command, "
                        + "arg, env, workDir, wallTimeMillis, retries, input, output, shellLine, retriesOnFailure, "
                        + "name, after, priority, cores, memoryMiB, diskMiB, gpus, resource, worker or payload)");
            }
        }
        if (command == null || command.isEmpty()) {
            throw new SoapInputException(where + ": no <command> (a task needs a command to run)");
        }
        argv.add(0, command);
        TaskSpec.Builder b = TaskSpec.builder(argv);
        if (env != null) {
            b.env(env);
        }
        if (workDir != null) {
            b.workDir(workDir);
        }
        if (wallTime > 0) {
            b.wallTime(Duration.ofMillis(wallTime));
        }
        if (retries >= 0) {
            b.retries(retries);
        }
        if (inputs != null) {
            b.inputs(inputs);
        }
        if (outputs != null) {
            b.outputs(outputs);
        }
        if (shellLine != null) {
            b.ext(new ExtField(ExtTags.SHELL_LINE, shellLine.getBytes(StandardCharsets.UTF_8)));
        }
        b.retriesOnFailure(retriesOnFailure);
        if (taskName != null) {
            b.name(taskName);
        }
        if (after != null) {
            b.after(after);
        }
        b.priority(priority);
        if (cores > 0 || memoryMiB >= 0) {
            b.resources((int) Math.max(1, cores), Math.max(0, memoryMiB));
        }
        b.disk(diskMiB);
        if (named != null) {
            try {
                b.namedResources(named);
            } catch (IllegalArgumentException e) {
                throw new SoapInputException(where + ": " + e.getMessage());
            }
        }
        if (payload != null && worker == null) {
            throw new SoapInputException(where + ": <payload> is for a persistent worker: name it with <worker>");
        }
        if (worker != null) {
            b.worker(worker, payload == null ? new byte[0] : payload);
        }
        try {
            return new ParsedTask(id, b.build());
        } catch (IllegalArgumentException e) {
            throw new SoapInputException(where + ": " + e.getMessage());
        }
    }

    private static TaskInput readInput(XMLStreamReader r, String where) {
        String id = r.getAttributeValue(null, "id");
        if (id == null || id.isEmpty()) {
            throw new SoapInputException(where + ": <input> needs an id attribute");
        }
        String size = r.getAttributeValue(null, "size");
        String unpack = r.getAttributeValue(null, "unpack");
        int mode = 0;
        if (unpack != null) {
            mode = List.of(UNPACK).indexOf(unpack);
            if (mode < 0) {
                throw new SoapInputException(where + ": <input id=\"" + id + "\"> unpack '" + unpack
                        + "' is not one of none, gzip, tar, tar.gz");
            }
        }
        try {
            return new TaskInput(id, orEmpty(r.getAttributeValue(null, "source")),
                    size == null ? -1 : parseLong(size, where + ": <input> size"),
                    orEmpty(r.getAttributeValue(null, "checksum")), mode, orEmpty(r.getAttributeValue(null, "name")),
                    flag(r, "readOnly", where));
        } catch (IllegalArgumentException e) {
            throw new SoapInputException(where + ": <input id=\"" + id + "\">: " + e.getMessage());
        }
    }

    // ---- results ---------------------------------------------------------------------------

    /** Writes {@code <result>}: the outcome of one task as delivered to its instance. */
    public static void writeResult(XMLStreamWriter w, Message.DeliveredResult r) throws XMLStreamException {
        Execution x = r.execution();
        // never writeEmptyElement: Axiom's serializer closes the tag before the attributes come
        w.writeStartElement(PREFIX, "result", NS);
        w.writeAttribute("id", Long.toString(r.clientTaskId()));
        if (r.seq() != 0) {
            w.writeAttribute("seq", Long.toString(r.seq())); // only results kept for acknowledgement have one
        }
        w.writeAttribute("status", x.status().name());
        w.writeAttribute("exitCode", Integer.toString(x.exitCode()));
        w.writeAttribute("attempt", Integer.toString(r.attempt()));
        w.writeAttribute("executor", r.executorId());
        if (x.noExec()) {
            w.writeAttribute("noExec", "true");
        }
        w.writeAttribute("submitted", Long.toString(r.submittedMicros()));
        w.writeAttribute("dispatched", Long.toString(r.dispatchedMicros()));
        w.writeAttribute("completed", Long.toString(r.completedMicros()));
        w.writeAttribute("started", Long.toString(x.startedMicros()));
        w.writeAttribute("finished", Long.toString(x.finishedMicros()));
        output(w, "stdout", x.stdout(), x.stdoutTruncated());
        output(w, "stderr", x.stderr(), x.stderrTruncated());
        if (!x.detail().isEmpty()) {
            text(w, "detail", x.detail());
        }
        DataCodec.Dependency d = DataCodec.dependencyOf(x);
        if (d != null) {
            w.writeStartElement(PREFIX, "dependency", NS);
            w.writeAttribute("producer", Long.toUnsignedString(d.producer()));
            w.writeCharacters(xmlSafe(d.what()));
            w.writeEndElement();
        }
        w.writeEndElement();
    }

    private static void output(XMLStreamWriter w, String name, byte[] bytes, boolean truncated)
            throws XMLStreamException {
        if (bytes.length == 0 && !truncated) {
            return;
        }
        w.writeStartElement(PREFIX, name, NS);
        if (truncated) {
            w.writeAttribute("truncated", "true");
        }
        w.writeCharacters(xmlSafe(new String(bytes, StandardCharsets.UTF_8)));
        w.writeEndElement();
    }

    /** Reads the {@code <result>} element the reader is positioned on, leaving it on its end tag. */
    public static Message.DeliveredResult readResult(XMLStreamReader r) throws XMLStreamException {
        long id = -1;
        long seq = 0;
        TaskStatus status = null;
        int exitCode = -1;
        int attempt = 0;
        String executor = "";
        int flags = 0;
        long submitted = 0;
        long dispatched = 0;
        long completed = 0;
        long started = 0;
        long finished = 0;
        // one pass over the attributes: a result is mostly attributes, and there are many results
        for (int i = 0, n = r.getAttributeCount(); i < n; i++) {
            String v = r.getAttributeValue(i);
            switch (r.getAttributeLocalName(i)) {
                case "id" -> id = parseLong(v, "<result> id");
                case "seq" -> seq = parseLong(v, "<result> seq");
                case "status" -> {
                    try {
                        status = TaskStatus.valueOf(v);
                    } catch (IllegalArgumentException e) {
                        throw new SoapInputException("<result>: unknown status '" + v + "'");
                    }
                }
                case "exitCode" -> exitCode = (int) parseLong(v, "<result> exitCode");
                case "attempt" -> attempt = (int) parseLong(v, "<result> attempt");
                case "executor" -> executor = v;
                case "noExec" -> flags |= "true".equals(v) ? Execution.NO_EXEC : 0;
                case "submitted" -> submitted = parseLong(v, "<result> submitted");
                case "dispatched" -> dispatched = parseLong(v, "<result> dispatched");
                case "completed" -> completed = parseLong(v, "<result> completed");
                case "started" -> started = parseLong(v, "<result> started");
                case "finished" -> finished = parseLong(v, "<result> finished");
                default -> {
                    // an attribute of a later version: ignored
                }
            }
        }
        if (id < 0 || status == null) {
            throw new SoapInputException("<result> needs the attributes id and status");
        }
        byte[] stdout = new byte[0];
        byte[] stderr = new byte[0];
        String detail = "";
        List<ExtField> ext = ExtField.NONE;
        String where = "<result id=\"" + id + "\">";
        while (r.nextTag() == XMLStreamConstants.START_ELEMENT) {
            switch (r.getLocalName()) {
                case "stdout" -> {
                    if ("true".equals(r.getAttributeValue(null, "truncated"))) {
                        flags |= Execution.STDOUT_TRUNCATED;
                    }
                    stdout = r.getElementText().getBytes(StandardCharsets.UTF_8);
                }
                case "stderr" -> {
                    if ("true".equals(r.getAttributeValue(null, "truncated"))) {
                        flags |= Execution.STDERR_TRUNCATED;
                    }
                    stderr = r.getElementText().getBytes(StandardCharsets.UTF_8);
                }
                case "detail" -> detail = r.getElementText();
                case "dependency" -> {
                    long producer = parseLong(r.getAttributeValue(null, "producer"), where + " <dependency> producer");
                    ext = List.of(new ExtField(ExtTags.DEPENDENCY, DataCodec.encodeDependency(
                            new DataCodec.Dependency(producer, r.getElementText()))));
                }
                default -> skipToEnd(r, where);
            }
        }
        Execution x = new Execution(status, exitCode, flags, started, finished, stdout, stderr, detail, ext);
        return new Message.DeliveredResult(id, seq, attempt, executor, submitted, dispatched, completed, x);
    }

    // ---- helpers ---------------------------------------------------------------------------

    /** Writes {@code <name>text</name>} in the service namespace. */
    public static void text(XMLStreamWriter w, String name, String text) throws XMLStreamException {
        w.writeStartElement(PREFIX, name, NS);
        w.writeCharacters(xmlSafe(text));
        w.writeEndElement();
    }

    /**
     * Replaces the characters XML 1.0 cannot carry (most C0 controls, unpaired surrogates, U+FFFE/F)
     * with U+FFFD, so that any program output can be put in a message.
     */
    public static String xmlSafe(String s) {
        int n = s.length();
        int i = 0;
        while (i < n && allowed(s, i)) {
            i++;
        }
        if (i == n) {
            return s;
        }
        StringBuilder b = new StringBuilder(n).append(s, 0, i);
        for (; i < n; i++) {
            b.append(allowed(s, i) ? s.charAt(i) : '\ufffd');
        }
        return b.toString();
    }

    private static boolean allowed(String s, int i) {
        char c = s.charAt(i);
        if (c >= 0x20 && c < 0xd800) {
            return true;
        }
        if (c == '\t' || c == '\n' || c == '\r') {
            return true;
        }
        if (Character.isHighSurrogate(c)) {
            return i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
        }
        if (Character.isLowSurrogate(c)) {
            return i > 0 && Character.isHighSurrogate(s.charAt(i - 1));
        }
        return c >= 0xe000 && c <= 0xfffd;
    }

    /** Parses a decimal {@code long}, naming {@code where} when it is not one. */
    public static long parseLong(String text, String where) {
        try {
            return Long.parseLong(text.trim());
        } catch (NumberFormatException e) {
            throw new SoapInputException(where + ": '" + LogSafe.text(text) + "' is not an integer");
        }
    }

    /**
     * Parses a decimal integer in {@code [min, max]}: out of range is an error naming {@code where},
     * never a value wrapped or clamped into range.
     */
    public static long parseBounded(String text, String where, long min, long max) {
        long v = parseLong(text, where);
        if (v < min || v > max) {
            throw new SoapInputException(where + ": " + v + " is out of range " + min + ".." + max);
        }
        return v;
    }

    private static String attr(XMLStreamReader r, String name, String where) {
        String v = r.getAttributeValue(null, name);
        if (v == null) {
            throw new SoapInputException(where + " has no attribute " + name);
        }
        return v;
    }

    private static String orEmpty(String s) {
        return s == null ? "" : s;
    }

    /** Skips to the end tag of the element the reader is on (ignoring what it contains). */
    public static void skipToEnd(XMLStreamReader r, String where) throws XMLStreamException {
        int depth = 1;
        while (depth > 0) {
            int e = r.next();
            if (e == XMLStreamConstants.START_ELEMENT) {
                depth++;
            } else if (e == XMLStreamConstants.END_ELEMENT) {
                depth--;
            } else if (e == XMLStreamConstants.END_DOCUMENT) {
                throw new SoapInputException(where + ": the document ends inside the element");
            }
        }
    }
}
