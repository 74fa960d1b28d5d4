package io.falkon.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;

import static org.assertj.core.api.Assertions.assertThat;

/** A task file is parsed once when it is small: the check keeps its tasks; a large one is streamed. */
class TaskFileTest {
    @TempDir
    Path dir;

    private static List<TaskFile.Entry> streamed(Path file, IntPredicate lines) throws IOException {
        List<TaskFile.Entry> out = new ArrayList<>();
        try (TaskFile f = TaskFile.open(file.toString(), TaskFile.Format.PLAIN).selecting(lines)) {
            f.forEachRemaining(out::add);
        }
        return out;
    }

    private static List<String> described(List<TaskFile.Entry> entries) {
        return entries.stream().map(e -> e.line() + " " + e.text() + " " + e.spec().argv()).toList();
    }

    @Test
    void aSmallFilesCheckKeepsExactlyTheTasksAStreamedReadWouldRun() throws Exception {
        Path file = dir.resolve("tasks.jsonl");
        Files.writeString(file, """
                # a comment
                {"args": ["/bin/echo", "one"]}

                {"shell": "echo two | tr a-z A-Z"}
                {"args": ["/bin/echo", "three"], "env": {"X": "1"}}
                """);
        for (IntPredicate lines : List.<IntPredicate>of(l -> true, l -> l != 4)) {
            TaskFile.Checked c = TaskFile.validate(file.toString(), TaskFile.Format.PLAIN, lines);
            assertThat(c.entries()).isNotNull();
            assertThat(described(c.entries())).isEqualTo(described(streamed(file, lines)));
            assertThat(c.tasks()).isEqualTo(c.entries().size());
            List<TaskFile.Entry> expected = List.copyOf(c.entries());
            try (TaskFile kept = TaskFile.of(file.toString(), c.entries())) {
                List<TaskFile.Entry> again = new ArrayList<>();
                kept.forEachRemaining(again::add);
                assertThat(again).isEqualTo(expected);
                assertThat(kept.name()).isEqualTo(file.toString());
            }
            assertThat(c.entries()).as("each task let go once read").containsOnlyNulls();
        }
    }

    @Test
    void aFileLargerThanTheBoundIsCheckedButNotKept() throws Exception {
        Path file = dir.resolve("big.txt");
        String comment = "#" + "x".repeat(1023) + "\n";
        try (Writer w = Files.newBufferedWriter(file)) {
            w.write("/bin/echo first\n");
            for (long written = 0; written <= TaskFile.KEEP_CHECKED_BYTES; written += comment.length()) {
                w.write(comment);
            }
            w.write("/bin/echo last\n");
        }
        TaskFile.Checked c = TaskFile.validate(file.toString(), TaskFile.Format.PLAIN, null);
        assertThat(c.tasks()).isEqualTo(2);
        assertThat(c.entries()).isNull();
        assertThat(streamed(file, null)).extracting(TaskFile.Entry::text).containsExactly("/bin/echo first",
                "/bin/echo last");
    }

    @Test
    void aFileOfMoreTasksThanTheBoundIsCheckedButNotKept() throws Exception {
        Path file = dir.resolve("many.txt");
        try (Writer w = Files.newBufferedWriter(file)) {
            for (int i = 0; i <= TaskFile.KEEP_CHECKED_TASKS; i++) {
                w.write("/bin/true\n");
            }
        }
        TaskFile.Checked c = TaskFile.validate(file.toString(), TaskFile.Format.PLAIN, null);
        assertThat(c.tasks()).isEqualTo(TaskFile.KEEP_CHECKED_TASKS + 1);
        assertThat(c.entries()).isNull();
    }
}
