package io.falkon.cli;

import io.falkon.client.TaskResult;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.TreeMap;

/**
 * Where each task's output goes as the task finishes ({@code falkon run} and {@code submit}): printed
 * whole, one task at a time (stdout to stdout, stderr to stderr), so that two tasks' output never
 * interleave; in input order on request ({@code --keep-order}: a finished task waits for the ones
 * before it); or written to files named from a template ({@code --output-files 'out/{#}.{stream}'});
 * or nowhere ({@code --quiet}).
 */
final class OutputPrinter {
    private final PrintStream out;
    private final PrintStream err;
    private final boolean keepOrder;
    private final String filesTemplate;
    private final Runnable clearProgress;
    /** --tag: each output line follows its task's tag and a TAB; the tags by task index. */
    private final boolean tag;
    private record Pending(long number, int line, TaskResult result) {
    }

    private final TreeMap<Long, Pending> waiting = new TreeMap<>();
    private long nextToPrint;

    /**
     * @param filesTemplate a path with {@code {#}} (the task's number), {@code {line}} (its line) and
     *                      {@code {stream}} ({@code stdout} or {@code stderr}); null to print
     * @param clearProgress clears the progress bar's line before output is printed
     */
    OutputPrinter(PrintStream out, PrintStream err, boolean keepOrder, String filesTemplate, Runnable clearProgress,
                  boolean tag) {
        if (filesTemplate != null && !filesTemplate.contains("{stream}") && !filesTemplate.contains("{#}")
                && !filesTemplate.contains("{line}")) {
            throw new IllegalArgumentException("--output-files '" + filesTemplate + "' names the same file for every "
                    + "task: use {#} (the task's number) or {line}, and {stream}");
        }
        this.out = out;
        this.err = err;
        this.keepOrder = keepOrder;
        this.filesTemplate = filesTemplate;
        this.clearProgress = clearProgress;
        this.tag = tag && filesTemplate == null;
    }

    /** What tags a task's output lines (--tag), by index: set by the run as tasks are submitted. */
    private java.util.function.LongFunction<String> tags = i -> "";

    void tags(java.util.function.LongFunction<String> tags) {
        this.tags = tags;
    }

    /**
     * A task finished: {@code index} is its place among the tasks submitted (0 for the first; --keep-order
     * prints in that order), {@code number} its number in the file (from 1: {@code {#}}; a rerun's tasks
     * keep theirs), {@code line} its line.
     */
    synchronized void finished(long index, long number, int line, TaskResult r) {
        if (!keepOrder) {
            emit(index, number, line, r);
            return;
        }
        waiting.put(index, new Pending(number, line, r));
        drain();
    }

    /** The same where a task's number is its place plus one (a file read whole). */
    synchronized void finished(long index, int line, TaskResult r) {
        finished(index, index + 1, line, r);
    }

    private void drain() {
        while (!waiting.isEmpty() && waiting.firstKey() == nextToPrint) {
            Pending p = waiting.pollFirstEntry().getValue();
            if (p.result() != null) {
                emit(nextToPrint, p.number(), p.line(), p.result());
            }
            nextToPrint++;
        }
    }

    /** A task that will never have output (refused, lost): later ones in input order need not wait for it. */
    synchronized void skipped(long index) {
        if (keepOrder) {
            waiting.put(index, new Pending(0, 0, null));
            drain();
        }
    }

    /** Prints whatever still waits for earlier tasks (the end of the run). */
    synchronized void flush() {
        while (!waiting.isEmpty()) {
            var e = waiting.pollFirstEntry();
            if (e.getValue().result() != null) {
                emit(e.getKey(), e.getValue().number(), e.getValue().line(), e.getValue().result());
            }
        }
    }

    private void emit(long index, long number, int line, TaskResult r) {
        byte[] stdout = r.stdout().getBytes(StandardCharsets.UTF_8);
        byte[] stderr = r.stderr().getBytes(StandardCharsets.UTF_8);
        if (filesTemplate != null) {
            write(path(number, line, "stdout"), stdout);
            write(path(number, line, "stderr"), stderr);
            return;
        }
        if (stdout.length == 0 && stderr.length == 0) {
            return;
        }
        clearProgress.run();
        if (tag) {
            String t = tags.apply(index);
            tagged(out, t, stdout);
            tagged(err, t, stderr);
            return;
        }
        out.write(stdout, 0, stdout.length);
        if (stdout.length > 0 && stdout[stdout.length - 1] != '\n') {
            out.println();
        }
        out.flush();
        err.write(stderr, 0, stderr.length);
        if (stderr.length > 0 && stderr[stderr.length - 1] != '\n') {
            err.println();
        }
        err.flush();
    }

    /** Each line of {@code bytes} after {@code tag} and a TAB (a last line without its newline gets one). */
    private static void tagged(PrintStream to, String tag, byte[] bytes) {
        if (bytes.length == 0) {
            return;
        }
        byte[] prefix = (tag + "\t").getBytes(StandardCharsets.UTF_8);
        int start = 0;
        for (int i = 0; i <= bytes.length; i++) {
            if (i == bytes.length || bytes[i] == '\n') {
                if (i > start || i < bytes.length) {
                    to.write(prefix, 0, prefix.length);
                    to.write(bytes, start, i - start);
                    to.write('\n');
                }
                start = i + 1;
            }
        }
        to.flush();
    }

    private Path path(long number, int line, String stream) {
        return Path.of(filesTemplate.replace("{#}", Long.toString(number))
                .replace("{line}", Integer.toString(line))
                .replace("{stream}", stream));
    }

    private static void write(Path p, byte[] bytes) {
        try {
            if (p.getParent() != null) {
                Files.createDirectories(p.getParent());
            }
            Files.write(p, bytes);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write task output to " + p + ": " + e.getMessage(), e);
        }
    }
}
