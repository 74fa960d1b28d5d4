package io.falkon.e2e.commands;

import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.policy.DispatchPolicy;
import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.dispatcher.policy.MaxComputeUtil;
import io.falkon.protocol.DataCodec;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.ExtTags;
import io.falkon.protocol.TaskInput;
import io.falkon.protocol.TaskOutput;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskStatus;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Task files from people one does not trust (issue 53), against both executors with real
 * processes: what a task declares can make an executor copy a file, never move, rename or delete
 * one that Falkon did not create; ids have one canonical form and no message reads one as two;
 * archives hold only canonical member names; a persistent worker that does not answer fails its
 * task. One subclass per implementation (Java, C).
 */
abstract class UntrustedTaskContract extends ExecutorFixture {
    private static final String READ_WRITE_READ = "rw-r-----";

    /** The outside file a task tries to reach, its mode 0640: it must stay where it is, as it is. */
    private Path outsideFile() throws Exception {
        Path f = Files.writeString(Files.createDirectories(dir.resolve("outside/v")).resolve("f"), "precious\n");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(READ_WRITE_READ));
        return f;
    }

    private void assertUntouched(Path f, Object inode) throws Exception {
        assertThat(f).as("the outside file").exists().hasContent("precious");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(f))).isEqualTo(READ_WRITE_READ);
        assertThat(Files.getAttribute(f, "unix:ino")).as("the same file, never moved away and back").isEqualTo(inode);
        try (Stream<Path> all = Files.list(f.getParent())) {
            assertThat(all).as("nothing added beside it").containsExactly(f);
        }
    }

    /**
     * A dispatcher and one executor with two slots on {@code store}, with a cache of {@code cache}
     * ("none": without) under a data-aware policy (first-available has executors bypass their caches);
     * an instance on it.
     */
    private Instance oneExecutor(String name, String cache, Path store) throws Exception {
        List<String> opts = new ArrayList<>(List.of("--slots", "2", "--store", store.toString()));
        if (!cache.equals("none")) {
            opts.addAll(List.of("--cache-size", cache));
        }
        return started(cache.equals("none") ? new FirstAvailable() : new MaxComputeUtil(), 1, name,
                opts.toArray(String[]::new));
    }

    /** A dispatcher under {@code policy}, {@code executors} executors started with {@code opts}, an instance on it. */
    private Instance started(DispatchPolicy policy, int executors, String name, String... opts) throws Exception {
        Dispatcher d = dispatcher(policy);
        for (int i = 0; i < executors; i++) {
            executor(d.port(), executors == 1 ? name : name + i, opts);
        }
        d.awaitExecutors(executors, Duration.ofSeconds(60));
        return instance(d.port(), name);
    }

    private static TaskSpec shell(String command, TaskOutput... outputs) {
        return TaskSpec.builder("/bin/sh", "-c", command).outputs(List.of(outputs)).build();
    }

    @Test
    void anOutputBehindALinkOutOfTheSandboxIsRefusedAndTheFileThereNeverMoved() throws Exception {
        Path outside = outsideFile();
        Object inode = Files.getAttribute(outside, "unix:ino");
        Path v = outside.getParent();
        for (String cache : List.of("none", "64m")) {
            Path store = Files.createDirectories(dir.resolve("store-" + cache));
            Instance in = oneExecutor("links-" + cache, cache, store);
            String linkDir = "ln -s '" + v + "' sub";
            List<TaskSpec> refused = List.of(
                    shell(linkDir, new TaskOutput("sub/f", "res/plain")),
                    shell(linkDir, new TaskOutput("sub/f", "res/temporary", true)),
                    shell(linkDir, new TaskOutput("sub/f", "res/archived", false, true)),
                    shell("ln -s '" + outside + "' t.txt", new TaskOutput("t.txt", "res/link")),
                    shell("ln -s '" + outside + "' t.txt", new TaskOutput("t.txt", "res/tlink", true)));
            for (TaskResult r : all(in.submit(refused))) {
                assertThat(r.status()).as(r.toString()).isEqualTo(TaskStatus.OUTPUT_FAILED);
                assertThat(r.execution().detail()).contains("leads out of the task's sandbox through a symbolic link");
                assertThat(r.attempt()).as("not retried: it would fail anywhere").isZero();
            }
            assertUntouched(outside, inode);
            // a link that stays in the sandbox is followed; a file of the sandbox's own keeps its mode
            List<TaskResult> kept = all(in.submit(List.of(
                    shell("mkdir d && echo inside > d/g && chmod 640 d/g && ln -s d/g l", new TaskOutput("l", "res/in")),
                    shell("echo own > own.txt && chmod 640 own.txt", new TaskOutput("own.txt", "res/own")),
                    shell("ln '" + outside + "' hard.txt", new TaskOutput("hard.txt", "res/hard")))));
            for (TaskResult r : kept.subList(0, 2)) {
                assertThat(r.succeeded()).as(r.toString()).isTrue();
            }
            assertThat(store.resolve("res/in")).hasContent("inside");
            assertThat(Files.isSymbolicLink(store.resolve("res/in"))).isFalse();
            for (String id : List.of("res/in", "res/own")) {
                assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(store.resolve(id))))
                        .as("%s keeps its file's mode, moved or copied (%s)", id, cache).isEqualTo(READ_WRITE_READ);
            }
            if (kept.get(2).succeeded()) { // a hard link (where the sandbox shares the file system): copied
                assertThat(store.resolve("res/hard")).hasContent("precious");
                assertThat(Files.isSameFile(store.resolve("res/hard"), outside)).isFalse();
            }
            assertUntouched(outside, inode);
        }
    }

    @Test
    void aTemporaryOutputThatIsALinkWithinTheSandboxIsHeldAndRead() throws Exception {
        // data-aware: caches in use (first-available bypasses them)
        Instance in = started(new MaxComputeUtil(), 1, "temp-link", "--slots", "1", "--cache-size", "64m",
                "--store", Files.createDirectories(dir.resolve("store")).toString());
        List<TaskResult> rs = all(in.submit(List.of(
                shell("echo data > real.txt && ln -s real.txt t.txt", new TaskOutput("t.txt", "tmp/t", true)),
                TaskSpec.builder("/bin/sh", "-c", "cat in.txt")
                        .inputs(List.of(new TaskInput("tmp/t", "tmp/t", -1, "", TaskInput.AS_STORED, "in.txt"))).build())));
        assertThat(rs.get(0).succeeded()).as(rs.get(0).toString()).isTrue();
        assertThat(rs.get(1).succeeded()).as(rs.get(1).toString()).isTrue();
        assertThat(rs.get(1).stdout()).isEqualTo("data\n");
        try (Stream<Path> stored = Files.walk(dir.resolve("store"))) {
            assertThat(stored.filter(Files::isRegularFile)).as("a temporary output is never written to the store")
                    .isEmpty();
        }
    }

    /** OUTPUTS holding one output whose id is {@code id}'s bytes as they are: the client's own check bypassed. */
    private static ExtField rawOutput(byte[] id) {
        ByteBuf b = Unpooled.buffer();
        b.writeShort(1);
        byte[] path = "o.txt".getBytes(StandardCharsets.UTF_8);
        b.writeInt(path.length).writeBytes(path);
        b.writeInt(id.length).writeBytes(id);
        return new ExtField(ExtTags.OUTPUTS, ByteBufUtil.getBytes(b));
    }

    @Test
    void idsThatWouldNameOneFileTwiceOrLeaveTheStoreAreRefusedBeforeAnythingRuns() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store"));
        Instance in = started(new FirstAvailable(), 1, "ids", "--slots", "1", "--store", store.toString());
        Path ran = dir.resolve("ran");
        for (String bad : List.of("res/x\u0000-other", "res/q/../x", "k\nevil", "/etc/x", "q/../../store/pwn", "a//b")) {
            assertThatThrownBy(() -> new TaskOutput("o.txt", bad)).as("the client's check: %s", bad)
                    .isInstanceOf(IllegalArgumentException.class);
            TaskSpec spec = TaskSpec.builder("/bin/sh", "-c", "echo x > o.txt; echo ran >> '" + ran + "'")
                    .ext(rawOutput(bad.getBytes(StandardCharsets.UTF_8))).build();
            CompletableFuture<TaskResult> f = in.submit(spec);
            assertThatThrownBy(() -> f.get(60, TimeUnit.SECONDS)).as("the dispatcher's check: %s", bad)
                    .isInstanceOf(ExecutionException.class).hasMessageContaining("outputs[0]")
                    .hasMessageContaining("nothing of this bundle was queued");
        }
        CompletableFuture<TaskResult> invalidUtf8 = in.submit(TaskSpec.builder("/bin/true")
                .ext(rawOutput(new byte[]{'r', (byte) 0xff})).build());
        assertThatThrownBy(() -> invalidUtf8.get(60, TimeUnit.SECONDS)).hasMessageContaining("UTF-8");
        assertThat(ran).as("no refused task ran").doesNotExist();
        try (Stream<Path> files = Files.walk(store)) {
            assertThat(files.filter(Files::isRegularFile)).as("nothing reached the store").isEmpty();
        }
        // the connection serves on
        assertThat(in.submit(shell("echo ok > o.txt", new TaskOutput("o.txt", "res/x"))).get(60, TimeUnit.SECONDS)
                .succeeded()).isTrue();
        assertThat(store.resolve("res/x")).hasContent("ok");
    }

    @Test
    void aBatchedPeerFetchGetsEachObjectUnderItsOwnId() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store"));
        Instance in = started(new MaxComputeUtil(), 2, "peer", "--slots", "1", "--cache-size", "64m",
                "--store", store.toString(), "--cache-host", "127.0.0.1");
        // ids that a line-based batch would have split or joined: a space, '&', '%', '=', '+', non-ASCII
        List<String> ids = List.of("evil", "k evil", "a&id=evil", "50%+x", "naïve=1", "good");
        List<TaskSpec> producers = new ArrayList<>();
        for (String id : ids) {
            producers.add(shell("printf '%s' '" + id.toUpperCase() + "' > o.txt", new TaskOutput("o.txt", id, true)));
        }
        List<TaskInput> reads = new ArrayList<>();
        for (int i = 0; i < ids.size(); i++) {
            reads.add(new TaskInput(ids.get(i), ids.get(i), -1, "", TaskInput.AS_STORED, "in" + i));
        }
        StringBuilder cat = new StringBuilder();
        for (int i = 0; i < ids.size(); i++) {
            cat.append("cat in").append(i).append("; echo; ");
        }
        List<TaskSpec> all = new ArrayList<>(producers);
        for (int r = 0; r < 4; r++) { // readers on both executors: what the other holds comes in one batch
            all.add(TaskSpec.builder("/bin/sh", "-c", cat.toString()).inputs(reads).build());
        }
        List<TaskResult> rs = all(in.submit(all));
        for (TaskResult r : rs) {
            assertThat(r.succeeded()).as(r.toString()).isTrue();
        }
        String expected = String.join("\n", ids.stream().map(String::toUpperCase).toList()) + "\n";
        for (TaskResult r : rs.subList(ids.size(), rs.size())) {
            assertThat(r.stdout()).as("each object under its own id").isEqualTo(expected);
        }
        assertThat(rs.subList(ids.size(), rs.size()).stream().mapToLong(r -> r.data().peerHits()).sum())
                .as("some came from the other executor").isPositive();
        assertThatThrownBy(() -> new TaskInput("k\nevil", "k", -1, "", 0, "")).hasMessageContaining("U+000A");
    }

    @Test
    void noArchiveMemberNameLeadsOutOfWhereItIsExtracted() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store"));
        Instance in = started(new FirstAvailable(), 1, "archiver", "--slots", "1", "--store", store.toString());
        List<String> ids = List.of("q/store/pwn", "a b/c", "x..y/..z", "deep/" + "d/".repeat(60) + "last");
        List<TaskSpec> specs = new ArrayList<>();
        for (String id : ids) {
            specs.add(shell("echo x > o.txt", new TaskOutput("o.txt", id, false, true)));
        }
        List<TaskResult> rs = all(in.submit(specs));
        for (TaskResult r : rs) {
            assertThat(r.succeeded()).as(r.toString()).isTrue();
        }
        Path archive = store.resolve(DataCodec.archivedOf(rs.get(0).execution()).get(0).archive());
        // Python's tarfile.extractall (no filter) writes a member wherever its name says: the names must not
        Path into = Files.createDirectories(dir.resolve("extracted/here"));
        Process py = new ProcessBuilder("python3", "-c", "import sys, tarfile\n"
                + "t = tarfile.open(sys.argv[1])\nprint('\\n'.join(t.getnames()))\nt.extractall(sys.argv[2])",
                archive.toString(), into.toString()).redirectErrorStream(true).start();
        String names = new String(py.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(py.waitFor()).as(names).isZero();
        assertThat(names.lines().toList()).containsExactlyInAnyOrderElementsOf(ids);
        for (String id : ids) {
            assertThat(into.resolve(id)).hasContent("x");
        }
        try (Stream<Path> beside = Files.list(dir.resolve("extracted"))) {
            assertThat(beside).as("nothing beside the destination").containsExactly(into);
        }
    }

    @Test
    void anInputArchiveWithAMemberOutsideItsDirectoryIsRefusedNamingTheMember() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store"));
        Process py = new ProcessBuilder("python3", "-c", "import io, sys, tarfile\n"
                + "t = tarfile.open(sys.argv[1], 'w')\n"
                + "for name in ('fine.txt', '../pwn'):\n"
                + "    i = tarfile.TarInfo(name); i.size = 2; t.addfile(i, io.BytesIO(b'x\\n'))\n"
                + "t.close()", store.resolve("evil.tar").toString()).redirectErrorStream(true).start();
        assertThat(py.waitFor()).as(new String(py.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).isZero();
        for (String cache : List.of("none", "4m")) {
            TaskResult r = oneExecutor("untar-" + cache, cache, store).submit(TaskSpec.builder("/bin/true")
                    .inputs(List.of(new TaskInput("evil", "evil.tar", -1, "", TaskInput.UNTAR, "e"))).build())
                    .get(60, TimeUnit.SECONDS);
            assertThat(r.status()).as(r.toString()).isEqualTo(TaskStatus.FETCH_FAILED);
            assertThat(r.execution().permanent()).isTrue();
            assertThat(r.execution().detail()).contains("tar entry '../pwn' would be written outside its directory");
        }
        try (Stream<Path> all = Files.walk(dir)) {
            assertThat(all.filter(p -> p.getFileName().toString().equals("pwn"))).as("written nowhere").isEmpty();
        }
    }

    @Test
    void aWorkerThatExitsOrClosesItsOutputWithoutAnsweringFailsItsTask() throws Exception {
        Instance in = started(new FirstAvailable(), 1, "silent", "--slots", "1");
        TaskResult exits = in.submit(TaskSpec.builder("x").worker(List.of("/bin/true"), new byte[0]).build())
                .get(60, TimeUnit.SECONDS);
        assertThat(exits.succeeded()).as(exits.toString()).isFalse();
        assertThat(exits.status()).isEqualTo(TaskStatus.LAUNCH_FAILED);
        assertThat(exits.execution().detail()).contains("/bin/true exited (exit status 0) without answering task");
        TaskResult closes = in.submit(TaskSpec.builder("x")
                .worker(List.of("/bin/sh", "-c", "exec 1>&-; exec sleep 60"), new byte[0]).build())
                .get(60, TimeUnit.SECONDS);
        assertThat(closes.succeeded()).isFalse();
        assertThat(closes.execution().detail()).contains("closed its standard output without answering task")
                .doesNotContain("signal");
        // the slot serves on, with a worker that answers
        TaskResult answers = in.submit(ExecutorContract.forWorker(ExecutorContract.contractWorker(), "", "echo", "hi")
                .build()).get(60, TimeUnit.SECONDS);
        assertThat(answers.succeeded()).as(answers.toString()).isTrue();
    }

    @Test
    void aWorkerGivenAsAShellLineRunsAsWritten() throws Exception {
        Instance in = started(new FirstAvailable(), 1, "shell-worker", "--slots", "1");
        Path sub = Files.createDirectories(dir.resolve("d"));
        Path script = Path.of(ExecutorContract.contractWorker().get(1));
        // as falkon run hands {"worker": "cd d && MARK=shell python3 w.py"} over: /bin/sh -c, as written
        String line = "cd '" + sub + "' && touch here && MARK=shell python3 '" + script + "'";
        TaskResult r = in.submit(ExecutorContract.forWorker(List.of("/bin/sh", "-c", line), "", "echo", "hi").build())
                .get(60, TimeUnit.SECONDS);
        assertThat(r.succeeded()).as(r.toString()).isTrue();
        assertThat(r.stdout()).contains("argv=echo hi", "mark=shell");
        assertThat(sub.resolve("here")).as("the line ran as written, its cd included").exists();
    }
}
