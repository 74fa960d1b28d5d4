package io.falkon.dispatcher;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The operator's shares of a shared dispatcher ({@code falkon dispatcher --share-file FILE}): one
 * line per instance name, {@code NAME SHARE} (a positive number; the name is what the client calls
 * its instance, e.g. {@code falkon submit --name}); blank lines and lines starting with {@code #}
 * are skipped. An instance whose name is not listed has a share of 1. Between instances with queued
 * tasks, the dispatcher's turns go in proportion to their shares (docs/cli.md, "Priorities and fair
 * share").
 */
public final class ShareFile {
    /** Most lines a share file may hold: it names people and workflows, not tasks. */
    static final int MAX_LINES = 100_000;

    private ShareFile() {
    }

    /** The shares by instance name; an error names the file, the line and what is wrong. */
    public static Map<String, Double> read(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        if (lines.size() > MAX_LINES) {
            throw new IllegalArgumentException(file + ": more than " + MAX_LINES + " lines");
        }
        Map<String, Double> shares = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int space = Math.max(line.lastIndexOf(' '), line.lastIndexOf('\t'));
            String where = file + ":" + (i + 1) + ": ";
            if (space < 0) {
                throw new IllegalArgumentException(where + "expected NAME SHARE (e.g. \"alice 2\"), got \"" + line + "\"");
            }
            String name = line.substring(0, space).strip();
            double share;
            try {
                share = Double.parseDouble(line.substring(space + 1));
            } catch (NumberFormatException e) {
                share = Double.NaN;
            }
            if (!(share > 0) || Double.isInfinite(share) || share > 1e6 || share < 1e-3) {
                throw new IllegalArgumentException(where + "the share of '" + name + "' must be a number from 0.001 "
                        + "to 1000000, got \"" + line.substring(space + 1) + "\"");
            }
            if (shares.put(name, share) != null) {
                throw new IllegalArgumentException(where + "'" + name + "' is listed twice");
            }
        }
        return shares;
    }
}
