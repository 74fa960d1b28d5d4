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
    void linesEndAsReadLineEndsThemAndALongLineIsPassedOverNotHeld() throws Exception {
        String text = "a\nbb\r\nccc\rdddd\r\n\n" + "x".repeat(70_000) + "\r\nlast";
        BoundedLines lines = new BoundedLines(new java.io.StringReader(text), 100_000);
        List<String> got = new ArrayList<>();
        for (String l; (l = lines.next()) != null; ) {
            got.add(l);
        }
        assertThat(got).containsExactly("a", "bb", "ccc", "dddd", "", "x".repeat(70_000), "last");
        assertThat(got).isEqualTo(new java.io.BufferedReader(new java.io.StringReader(text)).lines().toList());

        BoundedLines bounded = new BoundedLines(new java.io.StringReader("ok\n" + "y".repeat(200_000) + "\nafter\n"), 1000);
        assertThat(bounded.next()).isEqualTo("ok");
        assertThat(org.assertj.core.api.Assertions.catchThrowableOfType(BoundedLines.TooLong.class, bounded::next).chars)
                .isEqualTo(200_000);
        assertThat(bounded.next()).as("the reader moved past it").isEqualTo("after");
        assertThat(bounded.next()).isNull();
    }

    @Test
    void aLineLargerThanAnyDispatcherAcceptsIsRefusedBeforeAnythingRuns() throws Exception {
        Path file = dir.resolve("huge.txt");
        try (Writer w = Files.newBufferedWriter(file)) {
            w.write("echo first\n");
            w.write("echo " + "z".repeat(20 << 20) + "\n"); // 20 MiB
        }
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> TaskFile.validate(file.toString(),
                TaskFile.Format.PLAIN, null))).isInstanceOf(TaskFile.BadLine.class)
                .hasMessageStartingWith(file + ":2: a line of " + (5 + (20 << 20)) + " characters: no task may be over");
        // a shorter line whose task (its words, and the line kept for the shell) is still too large
        Files.writeString(file, "/bin/echo " + "w ".repeat(5 << 20) + "\n"); // 5 Mi words run without the shell
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> TaskFile.validate(file.toString(),
                TaskFile.Format.PLAIN, null))).isInstanceOf(TaskFile.BadLine.class)
                .hasMessageContaining(":1: its task is ").hasMessageContaining("bytes encoded: no dispatcher accepts");
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

    @Test
    void aJsonlTaskCarriesItsPriorityAndABadOneIsRefusedNamingTheLine() throws Exception {
        Path file = Files.writeString(dir.resolve("p.jsonl"), "{\"shell\": \"true\", \"priority\": 10}\n"
                + "{\"shell\": \"true\", \"priority\": -3}\n{\"shell\": \"true\"}\n");
        List<TaskFile.Entry> entries = entries(file);
        assertThat(entries).extracting(e -> e.spec().priority()).containsExactly(10, -3, 0);
        for (String bad : new String[]{"\"high\"", "1.5", "4294967296"}) {
            Path b = Files.writeString(dir.resolve("bad.jsonl"), "{\"shell\": \"true\"}\n{\"shell\": \"true\", "
                    + "\"priority\": " + bad + "}\n");
            assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> TaskFile.validate(b.toString(),
                    TaskFile.Format.PLAIN, null))).as(bad).isInstanceOf(TaskFile.BadLine.class)
                    .hasMessageContaining("bad.jsonl:2:").hasMessageContaining("\"priority\" must be a whole number");
        }
    }

    @Test
    void aJsonlTaskStatesItsCoresAndMemoryAndBadValuesAreRefusedNamingTheLine() throws Exception {
        Path file = Files.writeString(dir.resolve("r.jsonl"), "{\"shell\": \"xz -T2 a\", \"cores\": 2}\n"
                + "{\"shell\": \"true\", \"memory\": 512}\n{\"shell\": \"true\", \"cores\": 4, \"memory\": \"1.5g\"}\n"
                + "{\"shell\": \"true\"}\n{\"shell\": \"sort big\", \"disk\": \"20g\"}\n");
        List<TaskFile.Entry> entries = entries(file);
        assertThat(entries).extracting(e -> e.spec().cores()).containsExactly(2, 1, 4, 1, 1);
        assertThat(entries).extracting(e -> e.spec().memoryMiB()).containsExactly(0L, 512L, 1536L, 0L, 0L);
        assertThat(entries).extracting(e -> e.spec().diskMiB()).containsExactly(0L, 0L, 0L, 0L, 20_480L);
        assertThat(entries.get(3).spec().ext()).as("states nothing").isEmpty();
        for (String bad : new String[]{"\"cores\": 0", "\"cores\": 1.5", "\"cores\": \"two\"", "\"memory\": -1",
                "\"memory\": \"lots\"", "\"disk\": -5", "\"disk\": [1]"}) {
            assertThat(refusedSecondLine(bad)).hasMessageContaining(bad.substring(0, bad.indexOf(':')));
        }
    }

    @Test
    void aJsonlTaskAsksForGpusAndNamedResourcesAndBadOnesAreRefusedNamingTheLine() throws Exception {
        Path file = Files.writeString(dir.resolve("g.jsonl"), "{\"shell\": \"infer a\", \"gpus\": 1}\n"
                + "{\"shell\": \"render\", \"resources\": {\"license\": 1, \"gpus\": 2}}\n"
                + "{\"shell\": \"true\", \"gpus\": 0}\n");
        List<TaskFile.Entry> entries = entries(file);
        assertThat(entries.get(0).spec().namedResources().asMap()).containsExactly(java.util.Map.entry("gpus", 1L));
        assertThat(entries.get(1).spec().namedResources().attribute()).isEqualTo("gpus=2,license=1");
        assertThat(entries.get(2).spec().namedResources()).as("0 asks nothing").isNull();
        for (String bad : new String[]{"\"gpus\": -1", "\"gpus\": 1.5", "\"gpus\": \"one\"",
                "\"resources\": [1]", "\"resources\": {\"License\": 1}", "\"resources\": {\"cores\": 1}",
                "\"resources\": {\"x\": 2000000}", "\"gpus\": 1, \"resources\": {\"gpus\": 1}"}) {
            assertThat(refusedSecondLine(bad)).hasMessageContaining(bad.startsWith("\"gpus\"") ? "gpus" : "resource");
        }
    }

    @Test
    void aJsonlTaskNamesAPersistentWorkerWithAPayloadAndBadOnesAreRefusedNamingTheLine() throws Exception {
        Path file = Files.writeString(dir.resolve("w.jsonl"), "{\"args\": [\"count\", \"a\"], \"worker\": "
                + "[\"/opt/w\", \"-q\"], \"payload\": \"é\"}\n{\"args\": [\"true\"], \"worker\": \"python3 w.py\"}\n"
                + "{\"args\": [\"/bin/true\"]}\n");
        List<TaskFile.Entry> entries = entries(file);
        assertThat(entries.get(0).spec().worker().command()).containsExactly("/opt/w", "-q");
        assertThat(entries.get(0).spec().worker().payload()).isEqualTo("é".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertThat(entries.get(0).spec().argv()).containsExactly("count", "a");
        assertThat(entries.get(1).spec().worker().command()).as("a command line runs through the shell, exec'd")
                .containsExactly("/bin/sh", "-c", "python3 w.py");
        assertThat(entries.get(1).spec().worker().payload()).isEmpty();
        assertThat(entries.get(2).spec().worker()).isNull();
        for (String bad : new String[]{"\"worker\": []", "\"worker\": [\"\"]", "\"worker\": [1]", "\"worker\": \" \"",
                "\"payload\": \"x\"", "\"worker\": [\"w\"], \"payload\": 7"}) {
            Path b = Files.writeString(dir.resolve("bad.jsonl"), "{\"args\": [\"a\"]}\n{\"args\": [\"a\"], "
                    + bad + "}\n");
            String field = bad.contains("payload\": 7") || bad.startsWith("\"payload") ? "\"payload\"" : "\"worker\"";
            assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> TaskFile.validate(b.toString(),
                    TaskFile.Format.PLAIN, null))).as(bad).isInstanceOf(TaskFile.BadLine.class)
                    .hasMessageContaining("bad.jsonl:2:").hasMessageContaining(field);
        }
    }

    @Test
    void anOutputMayBeMarkedTemporaryAndAnythingButTrueOrFalseIsRefusedNamingTheLine() throws Exception {
        Path file = Files.writeString(dir.resolve("tmp.jsonl"), "{\"args\": [\"mDiff\"], \"outputs\": ["
                + "{\"path\": \"d.fits\", \"id\": \"diffs/d\", \"temporary\": true}, {\"path\": \"log\", \"id\": \"l\"}]}\n");
        List<TaskFile.Entry> entries = entries(file);
        assertThat(entries.get(0).spec().outputs()).containsExactly(
                new io.falkon.protocol.TaskOutput("d.fits", "diffs/d", true), new io.falkon.protocol.TaskOutput("log", "l"));
        Path bad = Files.writeString(dir.resolve("bad.jsonl"), "{\"args\": [\"a\"], \"outputs\": [{\"path\": \"x\", "
                + "\"id\": \"x\", \"temporary\": \"yes\"}]}\n");
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> TaskFile.validate(bad.toString(),
                TaskFile.Format.PLAIN, null))).isInstanceOf(TaskFile.BadLine.class)
                .hasMessageContaining("bad.jsonl:1:").hasMessageContaining("\"temporary\" must be true or false");
        Path both = Files.writeString(dir.resolve("both.jsonl"), "{\"args\": [\"a\"], \"outputs\": [{\"path\": \"x\", "
                + "\"id\": \"x\", \"temporary\": true, \"archive\": true}]}\n");
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> TaskFile.validate(both.toString(),
                TaskFile.Format.PLAIN, null))).isInstanceOf(TaskFile.BadLine.class)
                .hasMessageContaining("both.jsonl:1:").hasMessageContaining("not both");
        Path archived = Files.writeString(dir.resolve("arc.jsonl"), "{\"args\": [\"a\"], \"outputs\": [{\"path\": "
                + "\"x\", \"id\": \"x\", \"archive\": true}]}\n");
        List<TaskFile.Entry> arc = new ArrayList<>();
        try (TaskFile f = TaskFile.open(archived.toString(), TaskFile.Format.PLAIN)) {
            f.forEachRemaining(arc::add);
        }
        assertThat(arc.get(0).spec().outputs()).containsExactly(new io.falkon.protocol.TaskOutput("x", "x", false, true));
    }

    @Test
    void anInputMayBeMarkedReadOnlyAndAnOutputAtItsPathIsRefusedNamingTheLine() throws Exception {
        Path file = Files.writeString(dir.resolve("ro.jsonl"), "{\"args\": [\"mAdd\"], \"inputs\": ["
                + "{\"id\": \"corr/t.fits\", \"name\": \"corr/\", \"readOnly\": true}, {\"id\": \"region.hdr\"}]}\n");
        assertThat(entries(file).get(0).spec().inputs()).containsExactly(
                new io.falkon.protocol.TaskInput("corr/t.fits", "corr/t.fits", -1, "", 0, "corr/", true),
                io.falkon.protocol.TaskInput.of("region.hdr", "region.hdr"));
        Path bad = Files.writeString(dir.resolve("bad.jsonl"), "{\"args\": [\"a\"]}\n{\"args\": [\"a\"], \"inputs\": "
                + "[{\"id\": \"x\", \"readOnly\": 1}]}\n");
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> TaskFile.validate(bad.toString(),
                TaskFile.Format.PLAIN, null))).isInstanceOf(TaskFile.BadLine.class)
                .hasMessageContaining("bad.jsonl:2:").hasMessageContaining("\"readOnly\" must be true or false");
        Path clash = Files.writeString(dir.resolve("clash.jsonl"), "{\"shell\": \"sort -o x x\", \"inputs\": "
                + "[{\"id\": \"data/x\", \"readOnly\": true}], \"outputs\": [{\"path\": \"x\", \"id\": \"sorted\"}]}\n");
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> TaskFile.validate(clash.toString(),
                TaskFile.Format.PLAIN, null))).isInstanceOf(TaskFile.BadLine.class)
                .hasMessageContaining("clash.jsonl:1:").hasMessageContaining("outputs[0] 'x' is the path of read-only inputs[0]");
    }

    @Test
    void aLineThatIsNotOneJsonObjectIsRefusedNamingTheLineAndWhy() throws Exception {
        // read with the streaming parser alone (no ObjectMapper): the same tree, the same refusals
        List<TaskFile.Entry> ok = entries(Files.writeString(dir.resolve("ok.jsonl"),
                "{\"args\": [\"echo\", \"é\"], \"env\": {\"A\": \"1\"}, \"timeout\": 2.5, \"retries\": 3}\n"));
        assertThat(ok.get(0).spec().argv()).containsExactly("echo", "é");
        assertThat(ok.get(0).spec().env()).containsEntry("A", "1");
        assertThat(ok.get(0).spec().wallTimeMillis()).isEqualTo(2500);
        for (String[] bad : new String[][]{
                {"{\"shell\": \"true\"", "not valid JSON: Unexpected end-of-input"},
                {"{\"shell\": \"true\"} {\"shell\": \"false\"}", "not valid JSON: more than one JSON value"},
                {"[\"true\"]", "expected a JSON object"},
                {"[".repeat(5000) + "]".repeat(5000), "not valid JSON: Document nesting depth"}}) {
            Path b = Files.writeString(dir.resolve("bad.jsonl"), "{\"shell\": \"true\"}\n" + bad[0] + "\n");
            assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> TaskFile.validate(b.toString(),
                    TaskFile.Format.PLAIN, null))).as(bad[1]).isInstanceOf(TaskFile.BadLine.class)
                    .hasMessageContaining("bad.jsonl:2:").hasMessageContaining(bad[1]);
        }
    }

    /** What validating a .jsonl whose second line carries {@code fields} throws: a BadLine naming the line. */
    private Throwable refusedSecondLine(String fields) throws Exception {
        Path b = Files.writeString(dir.resolve("bad.jsonl"), "{\"shell\": \"true\"}\n{\"shell\": \"true\", "
                + fields + "}\n");
        Throwable t = org.assertj.core.api.Assertions.catchThrowable(() -> TaskFile.validate(b.toString(),
                TaskFile.Format.PLAIN, null));
        assertThat(t).as(fields).isInstanceOf(TaskFile.BadLine.class).hasMessageContaining("bad.jsonl:2:");
        return t;
    }

    /** Every entry of a plain task file, read as falkon run reads it. */
    private static List<TaskFile.Entry> entries(Path file) throws Exception {
        List<TaskFile.Entry> entries = new ArrayList<>();
        try (TaskFile f = TaskFile.open(file.toString(), TaskFile.Format.PLAIN)) {
            f.forEachRemaining(entries::add);
        }
        return entries;
    }
}
