package io.falkon.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.falkon.client.InstanceKey;
import io.falkon.protocol.auth.TokenSource;
import io.falkon.protocol.fs.OwnerOnly;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * What {@code falkon submit --detach} remembers on this machine about an instance it left running,
 * in {@code $FALKON_HOME/instances/ID.json} (readable by its owner only: it holds the instance's
 * key): the key, the dispatcher, and the task file with how its lines became tasks, so that later
 * commands can be given just the id (or its first digits) and can name tasks by their lines.
 */
final class InstanceRecords {
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * One detached instance.
     *
     * @param file  the task file's absolute path ("-" for standard input)
     * @param lines the line of each task, by task number, when the tasks were not the file's every
     *              task in order (a rerun of the failed ones); null when they were
     */
    record Record(String key, String dispatcher, String file, String template, Double timeoutSeconds,
                  Integer retriesOnFailure, long tasks, String submitted, int[] lines) {
        String id() {
            return Long.toUnsignedString(InstanceKey.parse(key).id(), 16);
        }
    }

    private final Path dir;

    InstanceRecords(Path dir) {
        this.dir = dir;
    }

    static InstanceRecords standard() {
        return new InstanceRecords(TokenSource.system().home().resolve("instances"));
    }

    Path dir() {
        return dir;
    }

    void save(Record r) throws IOException {
        OwnerOnly.directories(dir);
        ObjectNode o = JSON.createObjectNode();
        o.put("key", r.key());
        o.put("dispatcher", r.dispatcher());
        o.put("file", r.file());
        if (r.template() != null) {
            o.put("template", r.template());
        }
        if (r.timeoutSeconds() != null) {
            o.put("timeoutSeconds", r.timeoutSeconds());
        }
        if (r.retriesOnFailure() != null) {
            o.put("retriesOnFailure", r.retriesOnFailure());
        }
        o.put("tasks", r.tasks());
        o.put("submitted", r.submitted());
        if (r.lines() != null) {
            ArrayNode a = o.putArray("lines");
            for (int l : r.lines()) {
                a.add(l);
            }
        }
        // written whole, then renamed: a reader never sees half a record
        Path tmp = OwnerOnly.tempFile(dir, ".record", ".tmp");
        Files.writeString(tmp, o.toString());
        Files.move(tmp, file(r.id()), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    void delete(String id) throws IOException {
        Files.deleteIfExists(file(id));
    }

    /**
     * The instance was cancelled: its record goes, and a note of when stays ({@code ID.cancelled},
     * without the key), so that a later command naming it is told it was cancelled, not that no such
     * instance was ever submitted from here.
     */
    void cancelled(String id) throws IOException {
        OwnerOnly.directories(dir);
        Path tmp = OwnerOnly.tempFile(dir, ".cancelled", ".tmp");
        Files.writeString(tmp, now() + "\n");
        Files.move(tmp, dir.resolve(id + CANCELLED), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        delete(id);
    }

    private static final String CANCELLED = ".cancelled";

    /** When the instance with this id (or the start of one) was cancelled from here, or null. */
    private String cancelledAt(String ref) throws IOException {
        if (!Files.isDirectory(dir)) {
            return null;
        }
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                String n = p.getFileName().toString();
                if (n.endsWith(CANCELLED) && n.startsWith(ref)) {
                    return n.substring(0, n.length() - CANCELLED.length()) + " was cancelled at "
                            + Files.readString(p).strip();
                }
            }
        }
        return null;
    }

    /** The record of the instance with this id, or null. */
    Record get(String id) throws IOException {
        Path f = file(id);
        return Files.exists(f) ? read(f) : null;
    }

    /** Ids with a record here. */
    List<String> ids() throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                String n = p.getFileName().toString();
                if (n.endsWith(".json")) {
                    out.add(n.substring(0, n.length() - ".json".length()));
                }
            }
        }
        return out;
    }

    /**
     * The instance a user names: a full key (ID-SECRET, from anywhere), or an id or the start of one
     * recorded here.
     *
     * @throws Falkon.UserError naming what is wrong when it names none, or more than one
     */
    Record find(String ref) throws IOException {
        String r = ref.trim().toLowerCase();
        if (r.contains("-")) {
            InstanceKey.Parts parts;
            try {
                parts = InstanceKey.parse(r);
            } catch (IllegalArgumentException e) {
                throw new Falkon.UserError(e.getMessage());
            }
            Record known = get(Long.toUnsignedString(parts.id(), 16));
            return known != null && known.key().equals(InstanceKey.format(parts.id(), parts.secret())) ? known
                    : new Record(InstanceKey.format(parts.id(), parts.secret()), null, null, null, null, null, -1, null,
                    null);
        }
        if (!r.matches("[0-9a-f]{1,16}")) {
            throw new Falkon.UserError("'" + ref + "' is neither an instance id nor a key (ID-SECRET)");
        }
        List<String> matches = ids().stream().filter(id -> id.startsWith(r)).toList();
        String cancelled = matches.isEmpty() ? cancelledAt(r) : null;
        if (cancelled != null) {
            throw new Falkon.UserError("instance " + cancelled + " (falkon cancel): its tasks were stopped and its "
                    + "results are gone");
        }
        if (matches.isEmpty()) {
            throw new Falkon.UserError("no instance " + ref + " was submitted from here (" + dir + "): give its key "
                    + "(ID-SECRET) as falkon submit --detach printed it, or see falkon list");
        }
        if (matches.size() > 1) {
            throw new Falkon.UserError("'" + ref + "' is the start of several instances' ids: " + String.join(", ",
                    matches));
        }
        return get(matches.get(0));
    }

    static String now() {
        return Instant.now().toString();
    }

    private Path file(String id) {
        return dir.resolve(id + ".json");
    }

    private static Record read(Path f) throws IOException {
        JsonNode o = JSON.readTree(f.toFile());
        int[] lines = null;
        if (o.has("lines")) {
            JsonNode a = o.get("lines");
            lines = new int[a.size()];
            for (int i = 0; i < lines.length; i++) {
                lines[i] = a.get(i).asInt();
            }
        }
        return new Record(o.path("key").asText(), text(o, "dispatcher"), text(o, "file"), text(o, "template"),
                o.has("timeoutSeconds") ? o.get("timeoutSeconds").asDouble() : null,
                o.has("retriesOnFailure") ? o.get("retriesOnFailure").asInt() : null, o.path("tasks").asLong(-1),
                text(o, "submitted"), lines);
    }

    private static String text(JsonNode o, String field) {
        JsonNode v = o.get(field);
        return v == null || v.isNull() ? null : v.asText();
    }
}
