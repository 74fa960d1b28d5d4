package io.falkon.cli;

import java.io.IOException;
import java.io.Reader;

/**
 * The lines of a task file, each at most {@code maxChars} long: a longer line is never held whole
 * (a file of one 2 GiB line must not take the heap with it), but passed over and reported. Lines
 * end as {@link java.io.BufferedReader#readLine} ends them: {@code \n}, {@code \r} or {@code \r\n}.
 */
final class BoundedLines {
    /** A line over the bound; the reader has moved past it. */
    static final class TooLong extends IOException {
        private static final long serialVersionUID = 1L;
        final long chars;

        TooLong(long chars) {
            super("a line of " + chars + " characters");
            this.chars = chars;
        }
    }

    private final Reader in;
    private final int maxChars;
    private final char[] buf = new char[1 << 16];
    private int pos;
    private int end;
    private boolean eof;
    /** The last line ended with {@code \r}: a {@code \n} right after it belongs to it. */
    private boolean afterCr;

    BoundedLines(Reader in, int maxChars) {
        this.in = in;
        this.maxChars = maxChars;
    }

    /** The next line without its end, or null at the end of the input. */
    String next() throws IOException {
        StringBuilder line = null;
        long length = 0;
        boolean over = false;
        while (true) {
            if (pos == end && !fill()) {
                if (length == 0 && line == null && !over) {
                    return null;
                }
                break;
            }
            if (afterCr) {
                afterCr = false;
                if (buf[pos] == '\n') {
                    pos++;
                    continue;
                }
            }
            int start = pos;
            while (pos < end && buf[pos] != '\n' && buf[pos] != '\r') {
                pos++;
            }
            int n = pos - start;
            length += n;
            if (!over) {
                if (length > maxChars) {
                    over = true;
                    line = null;
                } else if (line == null && pos < end) {
                    pos++;
                    afterCr = buf[pos - 1] == '\r';
                    return new String(buf, start, n); // the whole line was in the buffer: no copying twice
                } else {
                    (line == null ? line = new StringBuilder(Math.max(16, n * 2)) : line).append(buf, start, n);
                }
            }
            if (pos < end) {
                afterCr = buf[pos] == '\r';
                pos++;
                break;
            }
        }
        if (over) {
            throw new TooLong(length);
        }
        return line == null ? "" : line.toString();
    }

    private boolean fill() throws IOException {
        if (eof) {
            return false;
        }
        int n = in.read(buf, 0, buf.length);
        if (n <= 0) {
            eof = true;
            return false;
        }
        pos = 0;
        end = n;
        return true;
    }
}
