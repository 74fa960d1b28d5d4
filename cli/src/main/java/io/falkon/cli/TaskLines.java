package io.falkon.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An instance's task numbers mapped back to the lines of its task file, as this machine recorded
 * them at {@code submit --detach}: the file is read again, so results can be named by their lines
 * and a rerun can pass over the lines that succeeded. Unknown (line -1) when nothing was recorded,
 * the tasks came from standard input, or the file has changed since.
 */
final class TaskLines {
    private final int[] lines;
    private final String[] texts;
    private final String why;

    private TaskLines(int[] lines, String[] texts, String why) {
        this.lines = lines;
        this.texts = texts;
        this.why = why;
    }

    /** The line of task {@code task}, or -1. */
    int line(long task) {
        return task >= 0 && task < lines.length ? lines[(int) task] : -1;
    }

    /** The line as written for task {@code task}, or null. */
    String text(long task) {
        return task >= 0 && task < texts.length ? texts[(int) task] : null;
    }

    boolean known() {
        return lines.length > 0;
    }

    /** Why the lines are not known, or null. */
    String why() {
        return why;
    }

    static TaskLines of(InstanceRecords.Record r) {
        if (r.file() == null) {
            return unknown("nothing on this machine records its task file");
        }
        if (r.file().equals("-")) {
            return unknown("its tasks came from standard input");
        }
        if (!Files.isRegularFile(Path.of(r.file()))) {
            return unknown(r.file() + " is gone");
        }
        List<TaskFile.Entry> entries = new ArrayList<>();
        Duration timeout = r.timeoutSeconds() == null ? null : Duration.ofMillis(Math.round(r.timeoutSeconds() * 1000));
        try (TaskFile f = TaskFile.open(r.file(), new TaskFile.Format(timeout,
                r.template() == null ? null : new CommandTemplate(r.template())))) {
            while (f.hasNext()) {
                entries.add(f.next());
            }
        } catch (IOException | RuntimeException e) {
            return unknown(r.file() + " can no longer be read as it was: " + e.getMessage());
        }
        int n = (int) Math.max(0, r.tasks());
        int[] lines = new int[n];
        String[] texts = new String[n];
        if (r.lines() == null) {
            if (entries.size() != n) {
                return unknown(r.file() + " has changed: " + entries.size() + " tasks now, " + n + " then");
            }
            for (int i = 0; i < n; i++) {
                lines[i] = entries.get(i).line();
                texts[i] = entries.get(i).text();
            }
        } else {
            Map<Integer, String> byLine = new HashMap<>();
            for (TaskFile.Entry e : entries) {
                byLine.put(e.line(), e.text());
            }
            for (int i = 0; i < n && i < r.lines().length; i++) {
                lines[i] = r.lines()[i];
                texts[i] = byLine.get(lines[i]);
                if (texts[i] == null) {
                    return unknown(r.file() + " has changed: line " + lines[i] + " is no longer a task");
                }
            }
        }
        return new TaskLines(lines, texts, null);
    }

    private static TaskLines unknown(String why) {
        return new TaskLines(new int[0], new String[0], why);
    }
}
