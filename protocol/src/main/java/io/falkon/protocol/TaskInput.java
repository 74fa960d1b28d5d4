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
 * @param name     the file name the task sees; empty: the last part of the id
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
        if (name.contains("/") || name.equals("..") || name.equals(".")) {
            throw new IllegalArgumentException("input name '" + name + "' must be a plain file name");
        }
    }

    public static TaskInput of(String id, String source) {
        return new TaskInput(id, source, -1, "", AS_STORED, "");
    }

    /** The file name the task sees. */
    public String fileName() {
        if (!name.isEmpty()) {
            return name;
        }
        String base = id.substring(id.lastIndexOf('/') + 1);
        return base.isEmpty() || base.equals("..") || base.equals(".") ? "input" : base;
    }
}
