package io.falkon.protocol;

/**
 * Makes text that came from a peer (an executor id, a client name, an error message) safe to put
 * in a log line or a status document: control characters are escaped (a newline cannot forge a log
 * line), and the text is cut at a bound. Every peer-provided string passes through here before it
 * is logged.
 */
public final class LogSafe {
    /** Longest text kept from a peer, in characters. */
    public static final int MAX_CHARS = 200;

    private LogSafe() {
    }

    /** {@code s} with control characters as {@code \xNN} and at most {@value #MAX_CHARS} characters kept. */
    public static String text(String s) {
        if (s == null) {
            return "null";
        }
        if (s.length() <= MAX_CHARS && clean(s)) {
            return s; // the common case allocates nothing
        }
        StringBuilder b = new StringBuilder(Math.min(s.length(), MAX_CHARS) + 8);
        int i = 0;
        for (; i < s.length() && b.length() < MAX_CHARS; i++) {
            char c = s.charAt(i);
            if (unsafe(c)) {
                b.append(String.format("\\x%02x", (int) c & 0xff));
            } else {
                b.append(c);
            }
        }
        if (i < s.length()) {
            b.append("...");
        }
        return b.toString();
    }

    private static boolean clean(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (unsafe(s.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    private static boolean unsafe(char c) {
        return c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == '\u2028' || c == '\u2029' || c == '\ufffd';
    }

    /**
     * An instance id as it may appear in a log: only its first half. The id together with the
     * instance's secret is what lets a client take an instance over, so neither is logged in full.
     */
    public static String instance(long id) {
        String hex = Long.toUnsignedString(id, 16);
        return hex.substring(0, Math.min(8, hex.length())) + "…";
    }
}
