package io.falkon.e2e.commands;

import org.junit.jupiter.api.extension.AfterTestExecutionCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * When a test fails, prints the end of every {@code *.log} its processes left under its temporary
 * directory to standard error, before the directory is deleted: a CI run keeps nothing else, and a
 * failure that does not recur locally can then still be read.
 */
final class LogsOnFailure implements AfterTestExecutionCallback {
    private static final int TAIL_LINES = 200;
    private final Supplier<Path> dir;

    LogsOnFailure(Supplier<Path> dir) {
        this.dir = dir;
    }

    @Override
    public void afterTestExecution(ExtensionContext context) {
        Path root = dir.get();
        if (context.getExecutionException().isEmpty() || root == null || !Files.isDirectory(root)) {
            return;
        }
        try (Stream<Path> files = Files.walk(root)) {
            for (Path log : files.filter(f -> f.getFileName().toString().endsWith(".log")).sorted().toList()) {
                List<String> lines = Files.readAllLines(log);
                System.err.println("---- " + context.getDisplayName() + " failed; the last " + TAIL_LINES
                        + " lines of " + root.relativize(log) + " (" + lines.size() + " lines) ----");
                lines.subList(Math.max(0, lines.size() - TAIL_LINES), lines.size()).forEach(System.err::println);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot print the logs under " + root, e);
        }
    }
}
