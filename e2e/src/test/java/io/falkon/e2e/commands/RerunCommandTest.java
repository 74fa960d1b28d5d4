package io.falkon.e2e.commands;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reruns through {@code falkon run --rerun-failed} as a user runs them (issue 56): a rerun keeps every
 * task's number ({@code {#}}, {@code --output-files}, the results' {@code task}) from the whole file,
 * and never touches the files of the tasks it does not run.
 */
class RerunCommandTest {
    @TempDir
    Path dir;

    @Test
    void aRerunKeepsEveryTasksNumberAndLeavesTheOtherTasksOutputFilesAsTheyWere() throws Exception {
        Path tasks = Files.writeString(dir.resolve("tasks.txt"), String.join("\n", "echo one", "sh -c \"exit 4\"",
                "echo three", "test -e ok4 && echo four-ok") + "\n");
        Path results = dir.resolve("rp.jsonl");
        String template = dir.resolve("outf") + "/{#}.{stream}";
        Cli.Result first = Cli.run(dir, "run", "-q", "--results", results.toString(), "--output-files", template,
                tasks.toString());
        assertThat(first.exit()).as(first.stderr()).isEqualTo(1);
        Map<String, byte[]> before = new HashMap<>();
        Map<String, FileTime> touched = new HashMap<>();
        for (String f : List.of("1.stdout", "1.stderr", "3.stdout", "3.stderr")) {
            Path p = dir.resolve("outf").resolve(f);
            before.put(f, Files.readAllBytes(p));
            Files.setLastModifiedTime(p, FileTime.fromMillis(1_000_000_000_000L)); // a rewrite would change it
            touched.put(f, Files.getLastModifiedTime(p));
        }
        Files.createFile(dir.resolve("ok4"));
        Cli.Result rerun = Cli.run(dir, "run", "-q", "--rerun-failed", results.toString(), "--results",
                results.toString(), "--output-files", template, tasks.toString());
        assertThat(rerun.stderr()).contains("rerunning 2 of the 4 tasks");
        for (String f : before.keySet()) {
            Path p = dir.resolve("outf").resolve(f);
            assertThat(Files.readAllBytes(p)).as("%s: byte for byte as the first run left it", f)
                    .isEqualTo(before.get(f));
            assertThat(Files.getLastModifiedTime(p)).as("%s: not written again", f).isEqualTo(touched.get(f));
        }
        assertThat(dir.resolve("outf/1.stdout")).hasContent("one");
        assertThat(dir.resolve("outf/4.stdout")).as("line 4 is task 4, in a rerun too").hasContent("four-ok");
        List<JsonNode> lines = Files.readAllLines(results).stream().map(RunCommandTest.Cli2::parse).toList();
        List<JsonNode> rerunLines = lines.subList(4, lines.size());
        assertThat(rerunLines).extracting(n -> n.get("task").asInt() + ":" + n.get("line").asInt())
                .containsExactlyInAnyOrder("2:2", "4:4");
    }

    @Test
    void aRerunRunsAgainTheProducerOfATemporaryInputItNeeds() throws Exception {
        Path fixed = dir.resolve("fixed");
        Path store = Files.createDirectories(dir.resolve("store"));
        Path wf = Files.writeString(dir.resolve("wf.jsonl"), String.join("\n",
                "{\"name\": \"nums\", \"shell\": \"seq 1 5 > nums.txt\", \"outputs\": [{\"path\": \"nums.txt\", "
                        + "\"id\": \"tmp/nums.txt\", \"temporary\": true}]}",
                "{\"name\": \"sum\", \"shell\": \"test -e '" + fixed + "' && awk '{s+=$1} END {print s}' nums.txt > "
                        + "sum.txt\", \"inputs\": [{\"id\": \"tmp/nums.txt\", \"name\": \"nums.txt\"}], "
                        + "\"outputs\": [{\"path\": \"sum.txt\", \"id\": \"res/sum.txt\"}]}",
                "{\"name\": \"other\", \"shell\": \"echo other > o.txt\", \"outputs\": [{\"path\": \"o.txt\", "
                        + "\"id\": \"res/other.txt\"}]}") + "\n");
        Path results = dir.resolve("r.jsonl");
        Cli.Result first = Cli.run(dir, "run", "-q", "--cache-size", "64m", "--store", store.toString(), "--results",
                results.toString(), wf.toString());
        assertThat(first.exit()).as(first.stderr()).isEqualTo(1);
        assertThat(store.resolve("tmp")).as("a temporary output is never stored").doesNotExist();
        Files.createFile(fixed); // the cause fixed
        Cli.Result rerun = Cli.run(dir, "run", "-q", "--cache-size", "64m", "--store", store.toString(), "--results",
                results.toString(), "--rerun-failed", results.toString(), wf.toString());
        assertThat(rerun.exit()).as(rerun.stderr()).isZero();
        assertThat(rerun.stderr()).contains("and line 1 again, which made temporary inputs of theirs");
        assertThat(store.resolve("res/sum.txt")).hasContent("15");
        List<JsonNode> lines = Files.readAllLines(results).stream().map(RunCommandTest.Cli2::parse).toList();
        assertThat(lines.subList(3, lines.size())).extracting(n -> n.get("line").asInt())
                .as("line 3 succeeded and stays done").containsExactlyInAnyOrder(1, 2);
    }
}
