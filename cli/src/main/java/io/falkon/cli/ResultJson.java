package io.falkon.cli;

import io.falkon.protocol.DataCodec;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.falkon.client.TaskResult;

/**
 * One task's result as a JSON object: a line of {@code --results FILE} and of {@code falkon results
 * --json}; read back by {@code --rerun-failed}.
 */
final class ResultJson {
    private ResultJson() {
    }

    /**
     * @param line    the task's line in its file, or -1 when not known
     * @param command the line as written, or null when not known
     */
    static String line(TaskResult r, int line, String command) {
        return line(r, r.taskId() + 1, line, command);
    }

    /** @param number the task's number in its file (from 1, as {@code {#}} and {@code --output-files} number it) */
    static String line(TaskResult r, long number, int line, String command) {
        return line(r, number, line, command, null);
    }

    /** @param detail what to say instead of the result's own detail (null: its own) */
    static String line(TaskResult r, long number, int line, String command, String detail) {
        ObjectNode o = head(number, line, command);
        o.put("status", r.status().name());
        o.put("exitCode", r.exitCode());
        o.put("succeeded", r.succeeded());
        o.put("executor", r.executorId());
        o.put("attempt", r.attempt());
        o.put("stdout", r.stdout());
        o.put("stderr", r.stderr());
        if (r.execution().stdoutTruncated()) {
            o.put("stdoutTruncated", true);
        }
        if (r.execution().stderrTruncated()) {
            o.put("stderrTruncated", true);
        }
        if (detail != null || !r.execution().detail().isEmpty()) {
            o.put("detail", detail != null ? detail : r.execution().detail());
        }
        if (r.data().accesses() > 0 || r.data().bytesWritten() > 0) { // where its inputs came from
            putData(o, r.data());
        }
        List<DataCodec.ArchivedOutput> archived = DataCodec.archivedOf(r.execution());
        if (!archived.isEmpty()) { // the index of its outputs in the executors' archives
            com.fasterxml.jackson.databind.node.ArrayNode a = o.putArray("archived");
            for (DataCodec.ArchivedOutput e : archived) {
                ObjectNode x = a.addObject();
                x.put("id", e.id());
                x.put("archive", e.archive());
                x.put("offset", e.offset());
                x.put("size", e.size());
                x.put("sha256", e.sha256());
            }
        }
        o.put("submittedMicros", r.submittedMicros());
        o.put("dispatchedMicros", r.dispatchedMicros());
        o.put("startedMicros", r.execution().startedMicros());
        o.put("finishedMicros", r.execution().finishedMicros());
        o.put("deliveredMicros", r.deliveredMicros());
        return JsonTree.write(o);
    }

    /** What every result line opens with: which task, at which line of the file, running what. */
    private static ObjectNode head(long number, int line, String command) {
        ObjectNode o = JsonTree.object();
        o.put("task", number);
        if (line >= 0) {
            o.put("line", line);
        }
        if (command != null) {
            o.put("command", command);
        }
        return o;
    }

    /**
     * The line of a task the dispatcher refused before queueing it (over its size limit, say): it never
     * ran, and has no TaskResult, but its line of the file has its result all the same: status
     * {@code REFUSED} and the dispatcher's reason.
     */
    static String refused(long number, int line, String command, String reason) {
        ObjectNode o = head(number, line, command);
        o.put("status", "REFUSED");
        o.put("succeeded", false);
        o.put("detail", reason);
        return JsonTree.write(o);
    }

    /** Data counters as {@code "data"} of {@code o}: a result's, or a run's summed (its summary line). */
    static void putData(ObjectNode o, io.falkon.protocol.DataStats d) {
        ObjectNode data = o.putObject("data");
        data.put("localHits", d.localHits());
        data.put("peerHits", d.peerHits());
        data.put("misses", d.misses());
        data.put("bytesLocal", d.bytesLocal());
        data.put("bytesPeer", d.bytesPeer());
        data.put("bytesStore", d.bytesStore());
        data.put("bytesWritten", d.bytesWritten());
    }

    /**
     * The line of a task {@code --skip-done} passed over: it did not run now, its work is done
     * (status {@code SKIPPED}, {@code succeeded}: a rerun passes over it too), and why.
     */
    static String skipped(long number, int line, String command, String why) {
        ObjectNode o = head(number, line, command);
        o.put("status", "SKIPPED");
        o.put("succeeded", true);
        o.put("detail", "done: " + why);
        return JsonTree.write(o);
    }

    /** Whether a result line read back says its task succeeded (older lines without the field: exit 0). */
    static boolean succeeded(JsonNode o) {
        JsonNode s = o.get("succeeded");
        if (s != null) {
            return s.asBoolean();
        }
        return "EXITED".equals(o.path("status").asText()) && o.path("exitCode").asInt(-1) == 0;
    }
}
