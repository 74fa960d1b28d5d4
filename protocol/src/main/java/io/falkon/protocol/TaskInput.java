package io.falkon.protocol;

import java.util.Objects;

/**
 * An object a task reads (data diffusion). The executor makes it available to the task as a file
 * (or, unpacked from an archive, a directory) named {@code name} in the task's working directory.
 *
 * @param id       the object's name (write-once: an id always names the same bytes)
 * @param source   where its persistent copy is: a path in the shared store (absolute, or relative to the
 *                 executor's store root), or a {@code file:} or {@code http(s):} URL
 * @param size     bytes, checked after fetching; -1 if unknown
 * @param checksum {@code sha256:HEX}, {@code md5:HEX}, or empty
 * @param unpack   0 as stored, 1 gunzip, 2 untar, 3 gunzip and untar
 * @param name     the file name the task sees; empty: the last part of the id; a directory's name and
 *                 a slash ({@code diffs/}): the object goes into that directory of the sandbox under
 *                 the last part of its id, so that a gather program finds all of them in one place
 * @param readOnly the task only reads it: the executor may give it a read-only view of the cached or
 *                 stored file instead of a copy of its own ({@link ExtTags#READ_ONLY}); a write to it, or
 *                 its removal, then fails. An executor that cannot copies it, as it does any unpacked or
 *                 checksummed input
 */
public record TaskInput(String id, String source, long size, String checksum, int unpack, String name,
                        boolean readOnly) {
    public static final int AS_STORED = 0;
    public static final int GUNZIP = 1;
    public static final int UNTAR = 2;
    public static final int GUNZIP_UNTAR = 3;

    public TaskInput {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(checksum, "checksum");
        Objects.requireNonNull(name, "name");
        String problem = ObjectId.problem(id);
        if (problem != null) {
            throw new IllegalArgumentException("id: " + problem);
        }
        if (unpack < 0 || unpack > 3) {
            throw new IllegalArgumentException("unpack must be 0..3, got " + unpack);
        }
        problem = ObjectId.inputNameProblem(name);
        if (problem != null) {
            throw new IllegalArgumentException("name '" + LogSafe.text(name) + "': " + problem);
        }
        problem = sourceProblem(source);
        if (problem != null) {
            throw new IllegalArgumentException("source: " + problem);
        }
    }

    /** An input the task gets a copy of, which it may change. */
    public TaskInput(String id, String source, long size, String checksum, int unpack, String name) {
        this(id, source, size, checksum, unpack, name, false);
    }

    /** The same input, which the task only reads. */
    public TaskInput asReadOnly() {
        return new TaskInput(id, source, size, checksum, unpack, name, true);
    }

    /** Longest source (a path or a URL), in characters. */
    public static final int MAX_SOURCE_CHARS = 8192;

    /** Why {@code source} cannot say where an input is, or null: no control characters, bounded. */
    static String sourceProblem(String source) {
        if (source.length() > MAX_SOURCE_CHARS) {
            return "a source must be at most " + MAX_SOURCE_CHARS + " characters";
        }
        for (int i = 0; i < source.length(); i++) {
            char c = source.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                return "a source must not hold control characters (NUL, newline, ...)";
            }
        }
        return null;
    }

    /** The directory of the sandbox it goes into (its name without the slash), or null for the sandbox itself. */
    public String directory() {
        return name.endsWith("/") ? name.substring(0, name.length() - 1) : null;
    }

    public static TaskInput of(String id, String source) {
        return new TaskInput(id, source, -1, "", AS_STORED, "");
    }

    /** Where the task sees it, relative to its sandbox: {@code name}, {@code directory/base}, or {@code base}. */
    public String fileName() {
        if (!name.isEmpty() && !name.endsWith("/")) {
            return name;
        }
        return name + id.substring(id.lastIndexOf('/') + 1); // an id's segments are plain names
    }
}
