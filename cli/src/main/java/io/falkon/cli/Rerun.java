package io.falkon.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.client.TaskResult;
import io.falkon.executor.ConnectOptions;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.function.IntPredicate;

/**
 * {@code --rerun-failed}: which lines of a task file to run again after an earlier run. From a
 * detached instance (its id or key): the lines of its tasks that did not succeed. From a results
 * file ({@code --results}): every line without a successful result, the last result of a line
 * counting, so the tasks that failed and those that never finished; a rerun that appends to the
 * same file ({@code --results} the same file, as GNU parallel's {@code --joblog}) keeps one record
 * across any number of reruns.
 */
final class Rerun {
    private static final ObjectMapper JSON = new ObjectMapper();

    private Rerun() {
    }

    /**
     * What to run again: the lines, and for a detached instance its record here (which says how its
     * lines became tasks: the template and the default wall time it was submitted with), else null.
     */
    record Selection(IntPredicate lines, InstanceRecords.Record record) {
    }

    /**
     * The lines of {@code file} whose tasks are to run again.
     *
     * @param file     the task file to be rerun (as given)
     * @param source   a results file, or an instance's id or key
     * @param connect  how to reach the instance's dispatcher (its address from this machine's record)
     */
    static Selection toRun(String file, String source, ConnectOptions connect) throws IOException,
            InterruptedException {
        Path p = Path.of(source);
        if (Files.isRegularFile(p)) {
            BitSet succeeded = succeededLines(p);
            return new Selection(line -> !succeeded.get(line), null);
        }
        InstanceRecords.Record[] record = {null};
        BitSet failed = failedLines(file, source, connect, record);
        return new Selection(failed::get, record[0]);
    }

    /**
     * {@code lines} and every line it needs run again with it: the producer of a temporary input of a
     * line that runs (a temporary output was held on an executor for the tasks that read it, never
     * stored, and is gone with the run that made it), and in turn the producers of that producer's
     * temporary inputs. Reads the file once, its tasks' dependencies alone. {@code added} gets the
     * lines brought back.
     */
    static IntPredicate withTemporaryProducers(String file, TaskFile.Format format, IntPredicate lines,
                                               java.util.SortedSet<Integer> added) throws IOException {
        java.util.Map<String, Integer> producerOf = new java.util.HashMap<>(); // temporary object -> its line
        java.util.Map<Integer, java.util.List<String>> reads = new java.util.HashMap<>();
        try (TaskFile f = TaskFile.open(file, format)) {
            while (f.hasNext()) {
                TaskFile.Entry e = f.next();
                Workflow.Deps d = e.deps();
                if (d == null) {
                    continue;
                }
                d.temporaryOutputs().forEach(id -> producerOf.put(id, e.line()));
                if (!d.inputIds().isEmpty()) {
                    reads.put(e.line(), d.inputIds());
                }
            }
        }
        if (producerOf.isEmpty()) {
            return lines;
        }
        java.util.ArrayDeque<Integer> work = new java.util.ArrayDeque<>();
        reads.keySet().stream().filter(lines::test).forEach(work::add);
        while (!work.isEmpty()) {
            for (String id : reads.getOrDefault(work.poll(), java.util.List.of())) {
                Integer producer = producerOf.get(id);
                if (producer != null && !lines.test(producer) && added.add(producer)) {
                    work.add(producer);
                }
            }
        }
        return added.isEmpty() ? lines : line -> lines.test(line) || added.contains(line);
    }

    /** The lines whose last result in a results file says they succeeded. */
    static BitSet succeededLines(Path results) throws IOException {
        BitSet ok = new BitSet();
        int n = 0;
        try (BufferedReader r = Files.newBufferedReader(results, StandardCharsets.UTF_8)) {
            String line;
            while ((line = r.readLine()) != null) {
                n++;
                if (line.isBlank()) {
                    continue;
                }
                JsonNode o = result(results, n, line, "--rerun-failed");
                ok.set(o.get("line").asInt(), ResultJson.succeeded(o));
            }
        }
        return ok;
    }

    /**
     * Line {@code n} of a results file, {@code text}, as a result with its {@code "line"}; else the
     * user is told what is wrong where ({@code option} is what read it).
     */
    static JsonNode result(Path results, int n, String text, String option) {
        JsonNode o;
        try {
            o = JSON.readTree(text);
        } catch (IOException e) {
            throw new Falkon.UserError(results + ":" + n + ": not a result (a JSON object per line, as --results "
                    + "writes them)");
        }
        if (o == null || !o.isObject() || !o.path("line").canConvertToInt()) {
            throw new Falkon.UserError(results + ":" + n + ": a result without its \"line\": " + option
                    + " needs a results file written by falkon run or submit --results");
        }
        return o;
    }

    /** The lines of an instance's tasks that did not succeed (it must have finished). */
    private static BitSet failedLines(String file, String source, ConnectOptions connect,
                                      InstanceRecords.Record[] found) throws IOException, InterruptedException {
        InstanceRef ref = new InstanceRef();
        ref.ref = source;
        ref.connect = connect;
        InstanceRecords.Record record;
        try {
            record = ref.record();
        } catch (Falkon.UserError e) {
            throw new Falkon.UserError("--rerun-failed " + source + ": no such results file"
                    + (Files.exists(Path.of(source)) ? " (not a regular file)" : "") + ", nor an instance id or key ("
                    + e.getMessage() + ")");
        }
        if (record.file() == null || !Path.of(record.file()).equals(Path.of(file).toAbsolutePath().normalize())) {
            throw new Falkon.UserError("--rerun-failed " + source + ": " + (record.file() == null
                    ? "nothing on this machine says which file that instance ran"
                    : "that instance ran " + record.file() + ", not " + file));
        }
        found[0] = record;
        TaskLines lines = TaskLines.of(record);
        if (!lines.known()) {
            throw new Falkon.UserError("--rerun-failed " + source + ": " + lines.why());
        }
        BitSet failed = new BitSet();
        try (Takeover t = new Takeover(ref.connect(), record.key(), true)) {
            t.awaitKept();
            long unfinished = Takeover.unfinished(t.status());
            if (unfinished > 0) {
                throw new Falkon.UserError("--rerun-failed " + source + ": the instance still has " + unfinished
                        + " unfinished task(s): wait for it (falkon wait " + record.id() + ") or cancel it first");
            }
            for (long task = 0; task < record.tasks(); task++) {
                TaskResult r = t.results().get(task);
                if (r == null || !r.succeeded()) { // no result: it was cancelled, or its result taken and lost
                    failed.set(lines.line(task));
                }
            }
        }
        return failed;
    }
}
