package io.falkon.protocol;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Shell command lines run without the shell when they need none (the fast path {@code make} takes):
 * a line made only of words of plain characters (letters, digits and {@code - _ . / : = + , % @ ^}),
 * separated by blanks, whose first word is neither a shell builtin or keyword nor an assignment, is
 * split on the blanks and run directly, the program found on the PATH as the shell would. Anything
 * else (quotes, {@code $}, redirections, pipes, globs, {@code ;}, {@code &}, backquotes, {@code ~},
 * {@code #}, non-ASCII, …) goes through {@code /bin/sh -c}.
 *
 * <p>A task run directly keeps its line ({@link ExtTags#SHELL_LINE}); when its program cannot be
 * started, the executor runs the line through the shell instead, so that the result is the
 * shell's own: exit 127 and "not found", exit 126 and "Permission denied", a script without a
 * {@code #!} line run by the shell, a working directory that does not exist.
 */
public final class ShellLine {
    /** Words that mean something to the shell itself: such lines always go through it. */
    private static final Set<String> SHELL_WORDS = Set.of(".", ":", "[", "alias", "bg", "break", "cd", "chdir",
            "command", "continue", "echo", "eval", "exec", "exit", "export", "false", "fc", "fg", "getopts", "hash",
            "jobs", "kill", "local", "printf", "pwd", "read", "readonly", "return", "set", "shift", "test", "times",
            "trap", "true", "type", "ulimit", "umask", "unalias", "unset", "wait", "if", "then", "else", "elif",
            "fi", "case", "esac", "for", "while", "until", "do", "done", "function", "select", "time", "{", "}",
            "!", "source");

    private ShellLine() {
    }

    /** The words of a line that needs no shell, or null when it does. */
    public static List<String> direct(String line) {
        List<String> words = new ArrayList<>();
        StringBuilder w = new StringBuilder();
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (c == ' ' || c == '\t') {
                if (w.length() > 0) {
                    words.add(w.toString());
                    w.setLength(0);
                }
            } else if (plain(c)) {
                w.append(c);
            } else {
                return null;
            }
        }
        if (w.length() > 0) {
            words.add(w.toString());
        }
        if (words.isEmpty() || SHELL_WORDS.contains(words.get(0)) || words.get(0).indexOf('=') >= 0) {
            return null;
        }
        return words;
    }

    private static boolean plain(char c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
                || "-_./:=+,%@^".indexOf(c) >= 0;
    }

    /** A task for a shell command line: its words run directly when it needs no shell, else {@code /bin/sh -c}. */
    public static TaskSpec.Builder task(String line) {
        List<String> words = direct(line);
        if (words == null) {
            return TaskSpec.builder("/bin/sh", "-c", line);
        }
        return TaskSpec.builder(words).ext(new ExtField(ExtTags.SHELL_LINE, line.getBytes(StandardCharsets.UTF_8)));
    }

    /** The shell line a task runs directly, or null (it is not one). */
    public static String of(TaskSpec spec) {
        for (ExtField f : spec.ext()) {
            if (f.tag() == ExtTags.SHELL_LINE) {
                return new String(f.value(), StandardCharsets.UTF_8);
            }
        }
        return null;
    }

    /** The same task through the shell: its line run by {@code /bin/sh -c}, everything else unchanged. */
    public static TaskSpec throughShell(TaskSpec spec) {
        String line = of(spec);
        if (line == null) {
            throw new IllegalArgumentException("not a shell line run directly");
        }
        List<ExtField> ext = new ArrayList<>();
        for (ExtField f : spec.ext()) {
            if (f.tag() != ExtTags.SHELL_LINE) {
                ext.add(f);
            }
        }
        return new TaskSpec(List.of("/bin/sh", "-c", line), spec.env(), spec.workDir(), spec.wallTimeMillis(), ext);
    }
}
