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
 */
public record TaskInput(String id, String source, long size, String checksum, int unpack, String name) {
    public static final int AS_STORED = 0;
    public static final int GUNZIP = 1;
    public static final int UNTAR = 2;
    public static final int GUNZIP_UNTAR = 3;

    public TaskInput {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(checksum, "checksum");
        Objects.requireNonNull(name, "name");
        if (id.isEmpty()) {
            throw new IllegalArgumentException("an input needs an id");
        }
        if (unpack < 0 || unpack > 3) {
            throw new IllegalArgumentException("unpack must be 0..3, got " + unpack);
        }
        if (!nameAllowed(name)) {
            throw new IllegalArgumentException("input name '" + name + "' must be a plain file name, or a "
                    + "directory's name and a slash (\"diffs/\": the object goes into that directory)");
        }
    }

    private static boolean nameAllowed(String name) {
        String plain = name.endsWith("/") ? name.substring(0, name.length() - 1) : name;
        if (plain.isEmpty()) {
            return name.isEmpty();
        }
        return plain.indexOf('/') < 0 && !plain.equals("..") && !plain.equals(".");
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
        String base = id.substring(id.lastIndexOf('/') + 1);
        base = base.isEmpty() || base.equals("..") || base.equals(".") ? "input" : base;
        return name + base;
    }
}
