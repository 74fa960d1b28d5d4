package io.falkon.e2e.commands;

import io.falkon.client.TaskResult;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.executor.LocalExecutors;
import io.falkon.protocol.TaskInput;
import io.falkon.protocol.TaskSpec;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The executor contract, run against the C executor (executor-c/, built by the normal build), and
 * its leak check: the AddressSanitizer + LeakSanitizer build runs 10,000 real tasks and must exit
 * cleanly with no report.
 */
class CExecutorIT extends ExecutorContract {
    @Override
    List<String> command() throws IOException {
        return LocalExecutors.cCommand();
    }

    /** The sanitizer build next to the normal one (executor-c/target/build-asan). */
    static Path sanitizerBuild() throws IOException {
        Path normal = LocalExecutors.cExecutable();
        Path asan = normal.getParent().resolveSibling("build-asan").resolve(normal.getFileName());
        assertThat(asan).as("the sanitizer build of the C executor (built by ./mvnw verify)").isExecutable();
        return asan;
    }

    /**
     * With one slot per CPU (the default on a node), each slot thread keeps to its own CPU, one each,
     * and the tasks it starts get the executor's whole CPU set back; with --pin-slots off nothing is
     * pinned.
     */
    @Test
    void slotThreadsKeepToOneCpuEachWhileTheirTasksGetEveryCpu() throws Exception {
        Set<Integer> cpus = cpusAllowed(Files.readString(Path.of("/proc/self/status")));
        assumeTrue(cpus.size() >= 2, "needs two CPUs to tell a pinned thread from an unpinned one");
        Dispatcher d = dispatcher(new FirstAvailable());
        int slots = cpus.size();
        Process pinned = executor(d.port(), "pinned", "--slots", String.valueOf(slots));
        d.awaitExecutors(1, Duration.ofSeconds(60));
        List<TaskSpec> specs = new ArrayList<>();
        for (int i = 0; i < 20 * slots; i++) {
            specs.add(TaskSpec.of("/bin/sh", "-c", "grep Cpus_allowed_list: /proc/self/status; sleep 0.05"));
        }
        for (TaskResult r : all(instance(d.port(), "pinned").submit(specs))) {
            assertThat(r.exitCode()).as(r.toString()).isZero();
            assertThat(cpusAllowed(r.stdout())).as("a task's CPUs").isEqualTo(cpus);
        }
        assertThat(threadCpus(pinned.pid())).as("the executor's threads' CPU sets")
                .containsAll(cpus.stream().map(Set::of).toList())
                .filteredOn(s -> s.size() == 1).hasSize(slots);

        Process unpinned = executor(d.port(), "unpinned", "--slots", String.valueOf(slots), "--pin-slots", "off");
        d.awaitExecutors(2, Duration.ofSeconds(60));
        assertThat(all(instance(d.port(), "unpinned").submit(specs))).allSatisfy(r -> assertThat(r.exitCode()).isZero());
        assertThat(threadCpus(unpinned.pid())).as("--pin-slots off").allSatisfy(s -> assertThat(s).isEqualTo(cpus));
    }

    @Test
    void aTaskThatStatesItsCoresRunsOnThatManyCpusOfItsOwnWhenSlotsArePinned() throws Exception {
        Set<Integer> cpus = cpusAllowed(Files.readString(Path.of("/proc/self/status")));
        assumeTrue(cpus.size() >= 2, "needs two CPUs to give a task two of its own");
        Dispatcher d = dispatcher(new FirstAvailable());
        int slots = cpus.size();
        executor(d.port(), "sets", "--slots", String.valueOf(slots), "--pin-slots", "on");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        String show = "grep Cpus_allowed_list: /proc/self/status; sleep 0.05";
        List<TaskSpec> specs = new ArrayList<>();
        for (int i = 0; i < 6 * slots; i++) {
            specs.add(TaskSpec.builder("/bin/sh", "-c", show).resources(i % 2 == 0 ? 2 : 1, 0).build());
        }
        specs.add(TaskSpec.of("/bin/sh", "-c", show)); // states nothing: every CPU, as before
        List<TaskResult> results = all(instance(d.port(), "sets").submit(specs));
        for (int i = 0; i < results.size(); i++) {
            TaskResult r = results.get(i);
            assertThat(r.exitCode()).as(r.toString()).isZero();
            Set<Integer> mine = cpusAllowed(r.stdout());
            assertThat(cpus).containsAll(mine);
            assertThat(mine).as("CPUs of task %d", i).hasSize(i == specs.size() - 1 ? cpus.size() : specs.get(i).cores());
        }
    }

    /** The CPU set of every thread of a process. */
    static List<Set<Integer>> threadCpus(long pid) throws IOException {
        List<Set<Integer>> sets = new ArrayList<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", String.valueOf(pid), "task"))) {
            for (Path t : tasks) {
                sets.add(cpusAllowed(Files.readString(t.resolve("status"))));
            }
        }
        return sets;
    }

    /** The CPUs of a Cpus_allowed_list line in /proc status text ("0-3,8"). */
    static Set<Integer> cpusAllowed(String status) {
        Matcher m = Pattern.compile("Cpus_allowed_list:\\s*(\\S+)").matcher(status);
        assertThat(m.find()).as("a Cpus_allowed_list line in: " + status).isTrue();
        Set<Integer> cpus = new TreeSet<>();
        for (String range : m.group(1).split(",")) {
            String[] ends = range.split("-");
            for (int c = Integer.parseInt(ends[0]); c <= Integer.parseInt(ends[ends.length - 1]); c++) {
                cpus.add(c);
            }
        }
        return cpus;
    }

    @Test
    void noLeaksOrMemoryErrorsUnderSanitizersOverTenThousandTasks() throws Exception {
        Dispatcher d = dispatcher(new FirstAvailable());
        List<String> cmd = new ArrayList<>(List.of(sanitizerBuild().toString(), "--log-level", "warn"));
        Process p = executor(cmd, d.port(), "asan", "--slots", "2", "--reconnect-for", "0");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        List<TaskSpec> specs = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            specs.add(i % 100 == 0 ? TaskSpec.of("/bin/sh", "-c", "echo out; echo err >&2; exit 3")
                    : TaskSpec.of("/bin/true"));
        }
        assertThat(all(instance(d.port(), "asan").submit(specs)))
                .allSatisfy(r -> assertThat(r.exitCode()).isIn(0, 3));
        d.close(); // SHUTTING_DOWN: the executor stops, frees everything, and LeakSanitizer checks at exit
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the executor exits when its dispatcher shuts down").isTrue();
        String log = Files.readString(log("asan"));
        assertThat(log).doesNotContain("LeakSanitizer").doesNotContain("AddressSanitizer")
                .doesNotContain("runtime error");
        assertThat(p.exitValue()).as(log).isZero();
    }

    /** Whether this machine lets the tests' user make a mount namespace (root here; the executor's probe agrees). */
    static boolean mayMakeMountNamespaces() throws Exception {
        Process p = new ProcessBuilder("unshare", "-m", "true").redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0;
    }

    /**
     * The result of a task that prints its read-only input's inode, then tries to append to it and
     * remove it, run by an executor started with {@code base} (logging at info) on {@code store}.
     */
    TaskResult touchingItsReadOnlyInput(List<String> base, String id, Path store) throws Exception {
        Files.writeString(store.resolve("obj"), "stored\n");
        Dispatcher d = dispatcher(new FirstAvailable());
        executor(base, d.port(), id, "--slots", "1", "--store", store.toString(), "--log-level", "info");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        return instance(d.port(), id).submit(TaskSpec.builder("/bin/sh", "-c",
                        "stat -c %i in.bin; (echo CORRUPT >> in.bin) 2>&1; rm in.bin 2>&1; true")
                .inputs(List.of(new TaskInput("obj", "obj", -1, "", TaskInput.AS_STORED, "in.bin", true))).build())
                .get(60, TimeUnit.SECONDS);
    }

    /**
     * Where it may make mount namespaces, the C executor gives a read-only input in place: the task
     * sees the stored file itself (its inode), and its write and removal fail (root's too).
     */
    @Test
    void aReadOnlyInputIsTheStoredFileItselfBehindAReadOnlyMount() throws Exception {
        assumeTrue(mayMakeMountNamespaces(), "needs the right to make mount namespaces (root)");
        Path store = Files.createDirectories(dir.resolve("store"));
        TaskResult r = touchingItsReadOnlyInput(command(), "in-place", store);
        assertThat(r.stdout().lines().findFirst()).as(r.toString())
                .contains(String.valueOf(Files.getAttribute(store.resolve("obj"), "unix:ino")));
        assertThat(r.stdout()).contains("Read-only file system").contains("Device or resource busy");
        assertThat(store.resolve("obj")).hasContent("stored\n");
    }

    /** An executor without the right (CAP_SYS_ADMIN dropped) says so once and copies read-only inputs. */
    @Test
    void withoutTheRightToMountAReadOnlyInputIsCopied() throws Exception {
        assumeTrue(mayMakeMountNamespaces(), "needs the right to make mount namespaces, to drop it");
        Path store = Files.createDirectories(dir.resolve("store"));
        List<String> dropped = new ArrayList<>(List.of("setpriv", "--bounding-set", "-sys_admin"));
        dropped.addAll(command());
        TaskResult r = touchingItsReadOnlyInput(dropped, "copies", store);
        assertThat(r.succeeded()).as(r.toString()).isTrue();
        assertThat(r.stdout().lines().findFirst()).as("a copy of its own")
                .isNotEqualTo(Optional.of(String.valueOf(Files.getAttribute(store.resolve("obj"), "unix:ino"))));
        assertThat(r.stdout()).doesNotContain("Read-only file system").doesNotContain("busy");
        assertThat(store.resolve("obj")).hasContent("stored\n");
        assertThat(Files.readString(log("copies"))).contains("read-only inputs are copied");
    }
}
