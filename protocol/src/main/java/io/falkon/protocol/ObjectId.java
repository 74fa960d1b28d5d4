package io.falkon.protocol;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The one canonical form of the names that become files: object ids (what inputs read and outputs
 * become: {@code ROOT/ID} in the store, a cache key, a tar member, a line of a peer request), the
 * paths a task declares its outputs at, and the names its inputs are staged under. The same rule is
 * written in C ({@code executor-c/src/names.c}) and Python ({@code falkon.names}), and the three are
 * held to the same answer for every byte string of {@code protocol/src/test/resources/golden/names.txt}.
 *
 * <p>An <b>object id</b> is 1..{@value #MAX_ID_BYTES} bytes of valid UTF-8, relative ("a/b", never
 * "/a"), made of segments separated by single slashes, each segment 1..{@value #MAX_SEGMENT_BYTES}
 * bytes, none of them "." or "..", and no control character anywhere (U+0000..U+001F, U+007F..U+009F:
 * no NUL that C would cut the id at, no newline that a line-based format would read as two ids). So
 * two different ids never name the same file, and no id names a file outside the root it is kept in.
 * An <b>output path</b> is the same but may be absolute and is up to {@value #MAX_PATH_BYTES} bytes.
 * An <b>input name</b> is empty, one segment, or one segment and a slash.
 */
public final class ObjectId {
    /** Longest object id, in UTF-8 bytes. */
    public static final int MAX_ID_BYTES = 1024;
    /** Longest output path, in UTF-8 bytes. */
    public static final int MAX_PATH_BYTES = 4096;
    /** Longest segment: what one directory entry may be called (Linux's NAME_MAX). */
    public static final int MAX_SEGMENT_BYTES = 255;

    private ObjectId() {
    }

    /** Why {@code id} is not an object id, or null when it is one. */
    public static String problem(String id) {
        return check(id, MAX_ID_BYTES, false, "an object id");
    }

    /** Why {@code utf8} (bytes as they came off the wire) is not an object id, or null. */
    public static String problem(byte[] utf8) {
        String s = decode(utf8);
        return s == null ? "an object id must be valid UTF-8" : problem(s);
    }

    /** Why {@code path} cannot be where a task writes an output, or null. */
    public static String pathProblem(String path) {
        return check(path, MAX_PATH_BYTES, true, "an output path");
    }

    /** Why {@code utf8} (as it came off the wire) cannot be an output path, or null. */
    public static String pathProblem(byte[] utf8) {
        String s = decode(utf8);
        return s == null ? "an output path must be valid UTF-8" : pathProblem(s);
    }

    /**
     * Why {@code name} cannot be what an input is staged as in a sandbox, or null: empty (the last
     * segment of its id), a plain file name, or a directory's name and a slash ("diffs/").
     */
    public static String inputNameProblem(String name) {
        if (name.isEmpty()) {
            return null;
        }
        String plain = name.endsWith("/") ? name.substring(0, name.length() - 1) : name;
        if (plain.isEmpty() || plain.indexOf('/') >= 0 || plain.equals(".") || plain.equals("..")) {
            return "an input's name must be a plain file name, or a directory's name and a slash (\"diffs/\": "
                    + "the object goes into that directory)";
        }
        return check(plain, MAX_SEGMENT_BYTES, false, "an input's name");
    }

    /** Whether {@code id} is an object id. */
    public static boolean valid(String id) {
        return problem(id) == null;
    }

    /** The id as it came off the wire: its text, or null when it is not valid UTF-8. */
    static String decode(byte[] utf8) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(utf8)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    private static String check(String s, int maxBytes, boolean mayBeAbsolute, String what) {
        if (s == null || s.isEmpty()) {
            return what + " must not be empty";
        }
        boolean absolute = s.charAt(0) == '/';
        if (absolute && !mayBeAbsolute) {
            return what + " must be relative (no leading '/'), got '" + LogSafe.text(s) + "'";
        }
        int bytes = absolute ? 1 : 0;
        int segmentStart = bytes;
        int segmentBytes = 0;
        for (int i = segmentStart; i <= s.length(); i++) {
            char c = i < s.length() ? s.charAt(i) : '/';
            if (c == '/') {
                String problem = segment(s, segmentStart, i, segmentBytes, what);
                if (problem != null) {
                    return problem;
                }
                bytes += i < s.length() ? 1 : 0;
                segmentStart = i + 1;
                segmentBytes = 0;
            } else if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) {
                return what + " must not hold control characters (NUL, newline, ...), found U+"
                        + String.format("%04X", (int) c) + " at character " + i;
            } else if (Character.isSurrogate(c)) {
                if (!Character.isHighSurrogate(c) || i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) {
                    return what + " must be valid UTF-8 (a lone surrogate at character " + i + ")";
                }
                i++;
                bytes += 4;
                segmentBytes += 4;
            } else {
                int n = c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
                bytes += n;
                segmentBytes += n;
            }
        }
        if (bytes > maxBytes) {
            return what + " must be at most " + maxBytes + " bytes, got " + bytes;
        }
        return null;
    }

    private static String segment(String s, int from, int to, int segmentBytes, String what) {
        if (from == to) {
            return what + " must not have an empty segment (a leading, trailing or doubled '/'), got '"
                    + LogSafe.text(s) + "'";
        }
        if (to - from <= 2 && s.charAt(from) == '.' && (to - from == 1 || s.charAt(from + 1) == '.')) {
            return what + " must not have a '.' or '..' segment, got '" + LogSafe.text(s) + "'";
        }
        if (segmentBytes > MAX_SEGMENT_BYTES) {
            return what + " must not have a segment over " + MAX_SEGMENT_BYTES + " bytes";
        }
        return null;
    }
}
