package io.falkon.e2e.commands;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code falkon run}'s own C executors speak the protocol on their standard input and output
 * (docs/architecture.md, "Local executors over pipes"), seen from inside: each line below is a task
 * that looks at its executor ({@code $PPID}) and at the run's JVM (the executor's parent) through
 * {@code /proc}.
 */
class PipedExecutorsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    /** The run's tasks' standard output by line number. */
    private Map<Integer, String> run(String tasks, String... options) throws Exception {
        Path file = dir.resolve("tasks.txt");
        Files.writeString(file, tasks);
        Path results = dir.resolve("results.jsonl");
        String[] args = new String[options.length + 5];
        args[0] = "run";
        System.arraycopy(options, 0, args, 1, options.length);
        args[options.length + 1] = "-q";
        args[options.length + 2] = "--results";
        args[options.length + 3] = results.toString();
        args[options.length + 4] = file.toString();
        Cli.Result r = Cli.run(dir, args);
        assertThat(r.exit()).as(r.stderr()).isZero();
        Map<Integer, String> out = new HashMap<>();
        for (String line : Files.readAllLines(results)) {
            JsonNode n = JSON.readTree(line);
            out.put(n.get("line").asInt(), n.get("stdout").asText().strip());
        }
        return out;
    }

    /** Counts the TCP sockets (of /proc/net/tcp and tcp6) among process {@code $p}'s descriptors. */
    private static final String TCP_SOCKETS = "n=0; for i in $(ls -l /proc/$p/fd | sed -n 's/.*socket:\\[\\([0-9]*\\)\\]/\\1/p');"
            + " do grep -q \" $i \" /proc/net/tcp /proc/net/tcp6 && n=$((n+1)); done; echo $n";

    @Test
    void theExecutorsAndTheRunHoldNoTcpSocketAndNoTaskCanReachTheirPipes() throws Exception {
        Map<Integer, String> out = run(String.join("\n",
                "readlink /proc/$PPID/fd/0",
                "test \"$(readlink /proc/$PPID/fd/1)\" = \"$(readlink /proc/$PPID/fd/2)\" && echo stdout-is-stderr",
                "p=$PPID; " + TCP_SOCKETS,
                "p=$(awk '{print $4}' /proc/$PPID/stat); " + TCP_SOCKETS,
                "cat; echo read-to-the-end",
                "ls /proc/self/fd | sort -n | tr '\\n' ' '") + "\n",
                "--executor", "c", "--executors", "2");
        assertThat(out.get(1)).as("the executor's standard input is no longer the dispatcher's pipe").isEqualTo("/dev/null");
        assertThat(out.get(2)).as("nor its standard output").isEqualTo("stdout-is-stderr");
        assertThat(out.get(3)).as("the executor dialled nothing").isEqualTo("0");
        assertThat(out.get(4)).as("the run's JVM neither listens nor connects over TCP").isEqualTo("0");
        assertThat(out.get(5)).as("a task reading its input gets the end at once").isEqualTo("read-to-the-end");
        // 0, 1 and 2, and the directory ls reads: the pipes to the dispatcher are not inherited
        assertThat(out.get(6)).isEqualTo("0 1 2 3");
    }

    @Test
    void whenTheRunsJvmIsKilledItsExecutorAndTheirTasksGoToo() throws Exception {
        Path pids = dir.resolve("pids");
        Path file = Files.writeString(dir.resolve("long.txt"), "echo $PPID $$ > " + pids + ".tmp && mv " + pids
                + ".tmp " + pids + " && sleep 120\n");
        List<String> cmd = Cli.falkon(List.of("-XX:TieredStopAtLevel=1"));
        cmd.addAll(List.of("run", "-q", "--executor", "c", file.toString()));
        Process run = Cli.asUser(new ProcessBuilder(cmd).directory(dir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD), dir)
                .start();
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> Files.exists(pids));
            String[] ids = Files.readString(pids).trim().split(" ");
            long executor = Long.parseLong(ids[0]);
            long task = Long.parseLong(ids[1]);
            assertThat(running(executor)).isTrue();
            run.destroyForcibly(); // SIGKILL: nothing of the run's JVM says goodbye; its end of the pipes closes
            await().atMost(Duration.ofSeconds(60)).until(() -> !running(executor) && !running(task));
        } finally {
            run.destroyForcibly();
        }
    }

    /** Whether the process exists and is not a zombie (an orphan's reaper may be slow to reap it). */
    private static boolean running(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2) != 'Z';
        } catch (java.io.IOException e) {
            return false;
        }
    }

    @Test
    void theJavaExecutorStillDialsTcp() throws Exception {
        // the check above, on the executor that still dials: it finds the executor's connection
        Map<Integer, String> out = run("p=$PPID; " + TCP_SOCKETS + "\n", "--executor", "java");
        assertThat(out.get(1)).as("the Java executor's connection to the run's dispatcher").isEqualTo("1");
    }
}
