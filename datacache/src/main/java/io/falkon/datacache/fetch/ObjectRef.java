package io.falkon.datacache.fetch;

import java.util.Objects;

/**
 * A data object a task reads: its name, where its persistent copy lives, and what to check.
 *
 * @param id       the object's name, unique in the deployment (write-once: the same id is the same bytes)
 * @param source   where the persistent copy is: an absolute path, a {@code file:} or {@code http(s):} URL,
 *                 or a path relative to the executor's shared store root
 * @param size     its size in bytes, checked after fetching; -1 if unknown
 * @param checksum {@code sha256:HEX} or {@code md5:HEX} to verify after fetching, or empty
 * @param unpack   the form the task wants: as stored, or unpacked
 */
public record ObjectRef(String id, String source, long size, String checksum, Unpack unpack) {

    /** Whether (and how) an object is unpacked for the task. */
    public enum Unpack {
        /** The bytes as stored. */
        NONE,
        /** A gzip file, decompressed to a file. */
        GZIP,
        /** A tar archive, extracted to a directory. */
        TAR,
        /** A gzipped tar archive, extracted to a directory. */
        TAR_GZ;

        /** Parses {@code gzip}, {@code tar}, {@code tar.gz}/{@code tgz}, or empty/{@code none}. */
        public static Unpack parse(String s) {
            return switch (s == null ? "" : s.toLowerCase()) {
                case "", "none" -> NONE;
                case "gzip", "gz" -> GZIP;
                case "tar" -> TAR;
                case "tar.gz", "tgz", "tar_gz" -> TAR_GZ;
                default -> throw new IllegalArgumentException("unknown unpack mode '" + s
                        + "' (none, gzip, tar, tar.gz)");
            };
        }
    }

    public ObjectRef {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(checksum, "checksum");
        Objects.requireNonNull(unpack, "unpack");
        if (id.isEmpty()) {
            throw new IllegalArgumentException("an object needs an id");
        }
        if (!checksum.isEmpty() && !checksum.matches("(sha256|md5):[0-9a-fA-F]+")) {
            throw new IllegalArgumentException("checksum of " + id + " must be sha256:HEX or md5:HEX, got " + checksum);
        }
    }

    public static ObjectRef of(String id, String source) {
        return new ObjectRef(id, source, -1, "", Unpack.NONE);
    }

    /** The cache key: the id, plus the form when unpacked. */
    public String key() {
        return unpack == Unpack.NONE ? id : id + "#" + unpack.name().toLowerCase();
    }

    /** The same object as stored (the form peers serve and the dispatcher indexes). */
    public ObjectRef packed() {
        return unpack == Unpack.NONE ? this : new ObjectRef(id, source, size, checksum, Unpack.NONE);
    }
}
