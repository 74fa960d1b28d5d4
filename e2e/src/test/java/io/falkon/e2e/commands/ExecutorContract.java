package io.falkon.e2e.commands;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.dispatcher.policy.DispatchPolicy;
import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.dispatcher.policy.GoodCacheCompute;
import io.falkon.dispatcher.policy.MaxComputeUtil;
import io.falkon.protocol.DataCodec;
import io.falkon.protocol.DataStats;
import io.falkon.protocol.ShellLine;
import io.falkon.protocol.TaskInput;
import io.falkon.protocol.TaskOutput;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.auth.TokenSource;
import io.falkon.protocol.tls.ThrowawayCertificates;
import io.falkon.protocol.tls.Tls;
import io.falkon.protocol.TaskStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import java.nio.file.NoSuchFileException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What every executor implementation must do, checked against real executor processes dialling a
 * real dispatcher on 127.0.0.1: thousands of real processes, wall-time kills of whole process
 * trees, capped output, exit codes and launch failures, data diffusion with caches and peers,
 * and surviving a dispatcher crash. One subclass per implementation (Java, C).
 */
abstract class ExecutorContract extends ExecutorFixture {
    @Test
    void aDispatcherThatStopsForGoodIsNamedTheSameWayByEveryExecutor() throws Exception {
        Dispatcher d = Dispatcher.start(DispatcherConfig.local().withToken(TOKEN));
        // both log at INFO here (the local default is WARN: a planned stop is not a problem)
        List<String> cmd = new ArrayList<>(command().stream().map(a -> a.equals("-Dfalkon.log.level=WARN")
                ? "-Dfalkon.log.level=INFO" : a.equals("warn") ? "info" : a).toList());
        Process p = executor(cmd, d.port(), "told-to-leave", "--slots", "1");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        d.close(); // tells its executors to leave: ERROR SHUTTING_DOWN
        boolean left = p.waitFor(60, TimeUnit.SECONDS);
        assertThat(left).as("the executor left; its log:%n%s", Files.readString(log("told-to-leave"))).isTrue();
        assertThat(p.exitValue()).isZero();
        assertThat(Files.readString(log("told-to-leave")))
                .contains("dispatcher error SHUTTING_DOWN: the dispatcher is shutting down; stopping");
    }

    @Test
    void runsTenThousandRealProcesses() throws Exception {
        Dispatcher d = dispatcher(new FirstAvailable());
        executor(d.port(), "many", "--slots", "2");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        List<TaskSpec> specs = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            specs.add(TaskSpec.of("/bin/true"));
        }
        List<TaskResult> results = all(instance(d.port(), "many").submit(specs));
        assertThat(results).hasSize(10_000).allSatisfy(r -> {
            assertThat(r.succeeded()).as(r.toString()).isTrue();
            assertThat(r.executorId()).isEqualTo("many");
            assertThat(r.execution().noExec()).isFalse();
        });
    }

    @Test
    void withIdleExitItStaysWhileHoldingTasksAndLeavesOnceIdle() throws Exception {
        Dispatcher d = dispatcher(new FirstAvailable());
        Process p = executor(d.port(), "idler", "--slots", "1", "--idle-exit", "1", "--reconnect-for", "0");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        // each task outlasts the idle time, and the second waits its turn: holding either, it stays
        List<TaskResult> results = all(instance(d.port(), "idle").submit(List.of(TaskSpec.of("sleep", "1.5"),
                TaskSpec.of("sleep", "1.5"))));
        assertThat(results).allSatisfy(r -> {
            assertThat(r.succeeded()).as(r.toString()).isTrue();
            assertThat(r.executorId()).isEqualTo("idler");
        });
        // then it leaves by itself, cleanly, and the dispatcher no longer counts it
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("left after 1 s idle").isTrue();
        assertThat(p.exitValue()).isZero();
        await().atMost(Duration.ofSeconds(30)).until(() -> d.status().contains("\"registered\":0"));
    }

    @Test
    void idleExitStillFiresAfterAReconnectThatCostItsTasks() throws Exception {
        DispatcherConfig cfg = DispatcherConfig.local().withToken(TOKEN);
        Dispatcher first = Dispatcher.start(cfg);
        int port = first.port();
        Process p = executor(port, "returner", "--slots", "1", "--idle-exit", "2", "--reconnect-for", "60");
        first.awaitExecutors(1, Duration.ofSeconds(60));
        instance(port, "held").submit(TaskSpec.of("sleep", "60")); // held when the dispatcher goes
        await().atMost(Duration.ofSeconds(30)).until(() -> first.status().contains("\"running\":1"));
        first.stopForRestart();
        Dispatcher second = Dispatcher.start(cfg.withPort(port));
        closing.add(second);
        // it comes back, holds nothing (its task went with the old connection), and leaves when idle
        second.awaitExecutors(1, Duration.ofSeconds(60));
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("left 2 s after coming back idle").isTrue();
        assertThat(p.exitValue()).isZero();
    }

    @Test
    void honoursTheHeartbeatIntervalTheDispatcherAnnounces() throws Exception {
        // 300 ms: the dispatcher takes 900 ms of silence for a dead peer, so an executor still on its
        // own 5 s beat would be cut while its one slot is busy, and the task run again
        for (long heartbeat : new long[]{300, 0}) {
            Dispatcher d = Dispatcher.start(DispatcherConfig.local().withToken(TOKEN).withHeartbeatMillis(heartbeat));
            closing.add(d);
            String id = "beat-" + heartbeat;
            executor(d.port(), id, "--slots", "1", "--reconnect-for", "0");
            d.awaitExecutors(1, Duration.ofSeconds(60));
            TaskResult r = instance(d.port(), id).submit(TaskSpec.of("sleep", "2.5")).get(60, TimeUnit.SECONDS);
            assertThat(r.succeeded()).as("heartbeat %d: %s", heartbeat, r).isTrue();
            assertThat(r.attempt()).as("heartbeat %d: never cut, never retried", heartbeat).isZero();
            assertThat(d.status()).contains("\"registered\":1");
        }
    }

    @Test
    void shellLinesRunWithoutTheShellEndExactlyAsTheyWouldThroughIt() throws Exception {
        Dispatcher d = dispatcher(new FirstAvailable());
        executor(d.port(), "lines", "--slots", "2");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        Path script = Files.writeString(dir.resolve("noshebang.sh"), "echo from-script; exit 5\n");
        script.toFile().setExecutable(true);
        Path plain = Files.writeString(dir.resolve("not-executable"), "data\n");
        Instance in = instance(d.port(), "lines");
        for (String line : List.of("/bin/true", "/bin/sh -c exit", "no-such-program-anywhere arg",
                script.toString(), plain.toString(), "/bin/ls /no/such/path", "ls " + dir)) {
            TaskSpec direct = ShellLine.task(line).workDir(dir.toString()).build();
            assertThat(ShellLine.of(direct)).as("%s runs directly", line).isNotNull();
            TaskResult fast = in.submit(direct).get(60, TimeUnit.SECONDS);
            TaskResult shell = in.submit(TaskSpec.builder("/bin/sh", "-c", line).workDir(dir.toString()).build())
                    .get(60, TimeUnit.SECONDS);
            assertThat(fast.status()).as(line).isEqualTo(shell.status());
            assertThat(fast.exitCode()).as(line).isEqualTo(shell.exitCode());
            assertThat(fast.stdout()).as(line).isEqualTo(shell.stdout());
            assertThat(fast.stderr()).as(line).isEqualTo(shell.stderr());
        }
    }

    @Test
    void aLaunchFailureNoRetryCouldMendIsNotRetriedAndSaysWhy() throws Exception {
        Dispatcher d = dispatcher(new FirstAvailable());
        executor(d.port(), "launch", "--slots", "1");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        Instance in = instance(d.port(), "launch");
        TaskResult missing = in.submit(TaskSpec.of("/no/such/program", "x")).get(60, TimeUnit.SECONDS);
        TaskResult noDir = in.submit(TaskSpec.builder("/bin/true").workDir("/no/such/dir").build())
                .get(60, TimeUnit.SECONDS);
        for (TaskResult r : List.of(missing, noDir)) {
            assertThat(r.status()).isEqualTo(TaskStatus.LAUNCH_FAILED);
            assertThat(r.attempt()).as("not retried: %s", r).isZero();
            assertThat(r.execution().permanent()).isTrue();
        }
        assertThat(missing.reason()).contains("/no/such/program");
        assertThat(missing.toString()).contains("LAUNCH_FAILED").contains("/no/such/program");
        assertThat(noDir.reason()).contains("/no/such/dir");
    }

    @Test
    void aWallTimeLimitKillsTheWholeProcessTree() throws Exception {
        Dispatcher d = dispatcher(new FirstAvailable());
        executor(d.port(), "timeouts", "--slots", "2");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        Path pidFile = dir.resolve("grandchild.pid");
        TaskSpec spec = TaskSpec.builder("/bin/sh", "-c", "sleep 60 & echo $! > " + pidFile + "; wait")
                .wallTime(Duration.ofMillis(300)).retries(0).build();
        TaskResult r = instance(d.port(), "timeouts").submit(spec).get(60, TimeUnit.SECONDS);
        assertThat(r.status()).isEqualTo(TaskStatus.TIMEOUT);
        assertThat(r.execution().detail()).contains("wall time 300 ms exceeded");
        long grandchild = Long.parseLong(Files.readString(pidFile).trim());
        await().atMost(Duration.ofSeconds(10)).until(() -> deadOrZombie(grandchild));
    }

    /** Gone, or a zombie not yet reaped by whoever adopted it: either way no longer running. */
    static boolean deadOrZombie(long pid) throws IOException {
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        if (!Files.exists(stat)) {
            return true;
        }
        String s;
        try {
            s = Files.readString(stat);
        } catch (NoSuchFileException e) {
            return true;
        }
        char state = s.charAt(s.lastIndexOf(')') + 2);
        return state == 'Z' || state == 'X';
    }

    /**
     * Where a task's end and its output's end part: the result waits for the task's real exit when
     * it closes its output early, takes what it wrote just before exiting, and does not wait for
     * what it leaves running (its process group is killed; a process that left the group is given
     * up on after a grace, its output so far kept).
     */
    @Test
    void theResultWaitsForTheExitNotForWhatTheTaskLeavesRunning() throws Exception {
        Dispatcher d = dispatcher(new FirstAvailable());
        executor(d.port(), "endings", "--slots", "2");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        Instance in = instance(d.port(), "endings");
        String big = "head -c 200000 /dev/zero | tr '\\0' y";
        List<TaskResult> rs = all(in.submit(List.of(
                TaskSpec.of("/bin/sh", "-c", "echo before; exec >/dev/null 2>&1; sleep 0.5; exit 3"),
                TaskSpec.of("/bin/sh", "-c", "echo out; echo err >&2; " + big + " >&2; exit 4"),
                TaskSpec.of("/bin/sh", "-c", "sleep 60 & echo $!"),
                // the task ends once the child is in its own session (before, its group would take it along)
                TaskSpec.of("/bin/sh", "-c", "setsid sleep 60 & p=$!; while [ \"$(cut -d' ' -f6 /proc/$p/stat)\" = "
                        + "\"$(cut -d' ' -f6 /proc/$$/stat)\" ]; do :; done; echo $p"))));
        assertThat(rs.get(0).exitCode()).isEqualTo(3);
        assertThat(rs.get(0).stdout()).isEqualTo("before\n");
        assertThat(rs.get(1).exitCode()).isEqualTo(4);
        assertThat(rs.get(1).stdout()).isEqualTo("out\n");
        assertThat(rs.get(1).stderr()).startsWith("err\nyyy");
        assertThat(rs.get(2).succeeded()).isTrue();
        long inGroup = Long.parseLong(rs.get(2).stdout().trim());
        await().atMost(Duration.ofSeconds(10)).until(() -> deadOrZombie(inGroup));
        assertThat(rs.get(3).succeeded()).isTrue();
        long escaped = Long.parseLong(rs.get(3).stdout().trim());
        assertThat(deadOrZombie(escaped)).as("a process in its own session is not the task's to kill").isFalse();
        ProcessHandle.of(escaped).ifPresent(ProcessHandle::destroyForcibly);
    }

    @Test
    void outputIsCappedAndTheTruncationMarked() throws Exception {
        Dispatcher d = dispatcher(new FirstAvailable());
        executor(d.port(), "capped", "--slots", "1", "--output-cap", "1000");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        TaskResult r = instance(d.port(), "capped").submit(TaskSpec.of("/bin/sh", "-c",
                "head -c 300000 /dev/zero | tr '\\0' x; echo short >&2")).get(60, TimeUnit.SECONDS);
        assertThat(r.succeeded()).isTrue();
        assertThat(r.stdout()).hasSize(1000).matches("x+");
        assertThat(r.execution().stdoutTruncated()).isTrue();
        assertThat(r.stderr()).isEqualTo("short\n");
        assertThat(r.execution().stderrTruncated()).isFalse();
    }

    @Test
    void exitCodesEnvironmentDirectoriesAndLaunchFailures() throws Exception {
        Dispatcher d = dispatcher(new FirstAvailable());
        executor(d.port(), "basics", "--slots", "2");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        Instance in = instance(d.port(), "basics");
        List<TaskResult> rs = all(in.submit(List.of(
                TaskSpec.of("/bin/sh", "-c", "exit 7"),
                TaskSpec.builder("/bin/sh", "-c", "echo \"$GREETING\"; pwd").env("GREETING", "hello")
                        .workDir(dir.toString()).build(),
                TaskSpec.builder("/no/such/program").retries(0).build(),
                TaskSpec.builder("true").workDir("/no/such/dir").retries(0).build(),
                TaskSpec.of("sh", "-c", "kill -9 $$"))));
        assertThat(rs.get(0).status()).isEqualTo(TaskStatus.EXITED);
        assertThat(rs.get(0).exitCode()).isEqualTo(7);
        assertThat(rs.get(1).stdout()).isEqualTo("hello\n" + dir.toRealPath() + "\n");
        assertThat(rs.get(2).status()).isEqualTo(TaskStatus.LAUNCH_FAILED);
        assertThat(rs.get(2).execution().detail()).contains("/no/such/program");
        assertThat(rs.get(3).status()).isEqualTo(TaskStatus.LAUNCH_FAILED);
        assertThat(rs.get(3).execution().detail()).contains("/no/such/dir");
        assertThat(rs.get(4).exitCode()).isEqualTo(137);
        assertThat(rs.get(4).execution().detail()).contains("signal 9");
    }

    /**
     * The executor got the deployment's token in its environment (as the embedded run and the
     * provisioner give it); its tasks do not inherit it, so a task that prints its environment
     * cannot leak it into results. A task that sets the variable itself keeps its own value.
     */
    @Test
    void tasksDoNotInheritTheExecutorsToken() throws Exception {
        Dispatcher d = dispatcher(new FirstAvailable());
        executor(d.port(), "env", "--slots", "1");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        List<TaskResult> rs = all(instance(d.port(), "env").submit(List.of(
                TaskSpec.of("/bin/sh", "-c", "echo \"${" + TokenSource.ENV + "-unset}\""),
                TaskSpec.of("env"),
                TaskSpec.builder("/bin/sh", "-c", "echo \"$" + TokenSource.ENV + "\"").env(TokenSource.ENV, "its-own")
                        .build())));
        assertThat(rs).allSatisfy(r -> assertThat(r.exitCode()).as(r.toString()).isZero());
        assertThat(rs.get(0).stdout()).isEqualTo("unset\n");
        assertThat(rs.get(1).stdout()).contains("PATH=").doesNotContain(TOKEN);
        assertThat(rs.get(2).stdout()).isEqualTo("its-own\n");
    }

    @Test
    void runsTasksOverTlsTrustingTheGivenCaAndRefusesADispatcherItCannotVerify() throws Exception {
        ThrowawayCertificates.Pem pem = ThrowawayCertificates.generate(dir.resolve("pki"));
        ThrowawayCertificates.Pem other = ThrowawayCertificates.generate(dir.resolve("other-pki"));
        Dispatcher d = Dispatcher.start(DispatcherConfig.local().withToken(TOKEN)
                .withTls(Tls.server(pem.chain(), pem.key())));
        closing.add(d);
        Process stranger = executor(d.port(), "wrong-ca", "--tls-ca", other.ca().toString(), "--reconnect-for", "0");
        executor(d.port(), "tls", "--slots", "2", "--tls-ca", pem.ca().toString());
        d.awaitExecutors(1, Duration.ofSeconds(60));
        FalkonClient c = FalkonClient.connect("127.0.0.1:" + d.port(), ClientOptions.defaults().withToken(TOKEN)
                .withTls(Tls.client(pem.ca())));
        closing.add(c);
        List<TaskResult> rs = all(c.createInstance("tls").submit(List.of(TaskSpec.of("/bin/echo", "sealed"),
                TaskSpec.of("/bin/sh", "-c", "exit 4"))));
        assertThat(rs.get(0).stdout()).isEqualTo("sealed\n");
        assertThat(rs.get(1).exitCode()).isEqualTo(4);
        assertThat(stranger.waitFor(60, TimeUnit.SECONDS)).as("an executor that cannot verify the dispatcher gives up")
                .isTrue();
        assertThat(stranger.exitValue()).isNotZero();
        assertThat(Files.readString(log("wrong-ca")).toLowerCase()).containsAnyOf("certif", "verify", "trust");
        assertThat(d.status()).doesNotContain("wrong-ca");
    }

    static String sha256(byte[] b) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }

    static TaskSpec hashing(String id, String source, long size, String checksum) {
        return TaskSpec.builder("/bin/sh", "-c", "sha256sum in.bin | cut -d' ' -f1")
                .inputs(List.of(new TaskInput(id, source, size, checksum, TaskInput.AS_STORED, "in.bin"))).build();
    }

    @Test
    void aStaleCachedCopyIsNeverServed() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store"));
        Dispatcher d = dispatcher(new GoodCacheCompute(0.9));
        executor(d.port(), "stat", "--slots", "1", "--cache-size", "4m", "--store", store.toString());
        d.awaitExecutors(1, Duration.ofSeconds(60));
        Instance in = instance(d.port(), "stale");
        byte[] v1 = new byte[100_000];
        new Random(1).nextBytes(v1);
        Path file = Files.write(store.resolve("obj"), v1);
        assertThat(in.submit(hashing("obj", "obj", -1, "")).get(60, TimeUnit.SECONDS).stdout().trim())
                .isEqualTo(sha256(v1));
        // the store file is replaced under the same id: the default revalidation (stat) sees it
        byte[] v2 = new byte[120_000];
        new Random(2).nextBytes(v2);
        Files.write(file, v2);
        TaskResult r = in.submit(hashing("obj", "obj", -1, "")).get(60, TimeUnit.SECONDS);
        assertThat(r.stdout().trim()).isEqualTo(sha256(v2));
        assertThat(r.data().refetched()).isEqualTo(1);
        // replaced again, this time keeping size and modification time: only a declared checksum tells
        byte[] v3 = new byte[120_000];
        new Random(3).nextBytes(v3);
        FileTime mtime = Files.getLastModifiedTime(file);
        Files.write(file, v3);
        Files.setLastModifiedTime(file, mtime);
        r = in.submit(hashing("obj", "obj", -1, "sha256:" + sha256(v3))).get(60, TimeUnit.SECONDS);
        assertThat(r.succeeded()).as(r.execution().detail()).isTrue();
        assertThat(r.stdout().trim()).isEqualTo(sha256(v3));
        assertThat(r.data().refetched()).isEqualTo(1);
        // and a declared size the cached copy does not have
        Files.write(file, new byte[5]);
        r = in.submit(hashing("obj", "obj", 5, "")).get(60, TimeUnit.SECONDS);
        assertThat(r.stdout().trim()).isEqualTo(sha256(new byte[5]));
    }

    @Test
    void aTaskCannotChangeTheCachedCopyAndAChangedCopyDoesNotSpreadToPeers() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store"));
        Path cacheA = dir.resolve("cache-a");
        Dispatcher d = dispatcher(new MaxComputeUtil());
        executor(d.port(), "a", "--slots", "1", "--cache-size", "4m", "--store", store.toString(), "--cache-dir",
                cacheA.toString(), "--cache-host", "127.0.0.1");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        byte[] bytes = new byte[50_000];
        new Random(5).nextBytes(bytes);
        Files.write(store.resolve("obj"), bytes);
        Instance in = instance(d.port(), "tamper");
        // a task (as the executor's user, here root) that writes to its input
        TaskSpec vandal = TaskSpec.builder("/bin/sh", "-c", "chmod u+w in.bin; echo CORRUPT >> in.bin; "
                + "sha256sum in.bin | cut -d' ' -f1")
                .inputs(List.of(new TaskInput("obj", "obj", -1, "", TaskInput.AS_STORED, "in.bin"))).build();
        TaskResult v = in.submit(vandal).get(60, TimeUnit.SECONDS);
        assertThat(v.stdout().trim()).as("its own copy changed").isNotEqualTo(sha256(bytes));
        assertThat(in.submit(hashing("obj", "obj", -1, "")).get(60, TimeUnit.SECONDS).stdout().trim())
                .as("the next task on the same executor").isEqualTo(sha256(bytes));
        // now the cache's own copy is changed behind its back (as root could): a peer that fetches it
        // refuses the bytes, which no longer match a's record, and reads the store instead
        try (var files = Files.walk(cacheA.resolve("objects"))) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                f.toFile().setWritable(true);
                Files.writeString(f, "CORRUPT", java.nio.file.StandardOpenOption.APPEND);
            }
        }
        executor(d.port(), "b", "--slots", "1", "--cache-size", "4m", "--store", store.toString(),
                "--cache-host", "127.0.0.1");
        d.awaitExecutors(2, Duration.ofSeconds(60));
        // keeps a busy until the test lets it go (no sleep as a clock): max-compute-util sends the next task to b
        Path gate = dir.resolve("gate");
        in.submit(TaskSpec.of("/bin/sh", "-c", "while [ ! -e '" + gate + "' ]; do sleep 0.05; done"));
        await().atMost(Duration.ofSeconds(30)).until(() -> d.status().contains("\"running\":1"));
        TaskResult b = in.submit(hashing("obj", "obj", -1, "")).get(60, TimeUnit.SECONDS);
        Files.createFile(gate);
        assertThat(b.executorId()).isEqualTo("b");
        assertThat(b.stdout().trim()).isEqualTo(sha256(bytes));
        assertThat(b.data().peerHits()).as("the peer's copy was refused").isZero();
        assertThat(b.data().misses()).isEqualTo(1);
        assertThat(Files.readString(log("b"))).as("b tried a and refused its copy")
                .contains("do not match its own record");
    }

    /**
     * A task given a read-only input (READ_ONLY) reads it as stored; whatever it then tries on it
     * (make it writable, append, remove), the stored file and what the next task reads stay the same,
     * from the store (first-available) and from a cache alike, and its own outputs are saved. Whether
     * the try fails (a read-only view) or changes a copy of its own is the executor's to choose.
     */
    @Test
    void nothingATaskTriesOnAReadOnlyInputReachesTheStoreOrTheNextTask() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store"));
        byte[] bytes = new byte[50_000];
        new Random(11).nextBytes(bytes);
        Files.write(store.resolve("obj"), bytes);
        Dispatcher plain = dispatcher(new FirstAvailable());
        executor(plain.port(), "plain", "--slots", "1", "--store", store.toString());
        plain.awaitExecutors(1, Duration.ofSeconds(60));
        Dispatcher cached = dispatcher(new MaxComputeUtil());
        executor(cached.port(), "cached", "--slots", "1", "--store", store.toString(), "--cache-size", "4m",
                "--cache-dir", dir.resolve("cache").toString());
        cached.awaitExecutors(1, Duration.ofSeconds(60));
        // each try in a subshell of its own: a failed redirection ends a non-interactive shell
        TaskSpec vandal = TaskSpec.builder("/bin/sh", "-c", "sha256sum in.bin | cut -d' ' -f1; (chmod u+w in.bin); "
                        + "(echo CORRUPT >> in.bin); (: > in.bin); (rm -f in.bin); echo saved > out.txt")
                .inputs(List.of(new TaskInput("obj", "obj", -1, "", TaskInput.AS_STORED, "in.bin", true)))
                .outputs(List.of(new TaskOutput("out.txt", "results/out.txt"))).build();
        for (Dispatcher d : List.of(plain, cached)) {
            Instance in = instance(d.port(), "read-only-" + d.port());
            TaskResult v = in.submit(vandal).get(60, TimeUnit.SECONDS);
            assertThat(v.succeeded()).as(v.toString()).isTrue();
            assertThat(v.stdout().lines().findFirst()).as("what it read").contains(sha256(bytes));
            assertThat(v.data().misses() + v.data().localHits()).isEqualTo(1);
            assertThat(store.resolve("results/out.txt")).hasContent("saved");
            assertThat(sha256(Files.readAllBytes(store.resolve("obj")))).as("the stored file").isEqualTo(sha256(bytes));
            assertThat(in.submit(hashing("obj", "obj", -1, "")).get(60, TimeUnit.SECONDS).stdout().trim())
                    .as("what the next task reads").isEqualTo(sha256(bytes));
            Files.delete(store.resolve("results/out.txt"));
        }
    }

    /**
     * A read-only input stays what it was for the task's whole run, though the cache evicts the
     * object meanwhile (a read-only view holds the retired file; a copy is the task's anyway).
     */
    @Test
    void aReadOnlyInputOutlivesItsEvictionFromTheCacheWhileItsTaskRuns() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store"));
        byte[] a = new byte[60_000];
        byte[] b = new byte[60_000];
        new Random(21).nextBytes(a);
        new Random(22).nextBytes(b);
        Files.write(store.resolve("a"), a);
        Files.write(store.resolve("b"), b);
        Dispatcher d = dispatcher(new MaxComputeUtil());
        // room for one of the two objects, not both
        executor(d.port(), "small", "--slots", "2", "--store", store.toString(), "--cache-size", "100000",
                "--cache-dir", dir.resolve("cache").toString());
        d.awaitExecutors(1, Duration.ofSeconds(60));
        Instance in = instance(d.port(), "evicted");
        Path gate = dir.resolve("gate");
        // hashes its input, waits until the test lets it go (no sleep as a clock), hashes it again
        CompletableFuture<TaskResult> reader = in.submit(TaskSpec.builder("/bin/sh", "-c",
                        "sha256sum in.bin | cut -d' ' -f1; while [ ! -e '" + gate + "' ]; do sleep 0.05; done; "
                                + "sha256sum in.bin | cut -d' ' -f1")
                .inputs(List.of(new TaskInput("a", "a", -1, "", TaskInput.AS_STORED, "in.bin", true))).build());
        await().atMost(Duration.ofSeconds(30)).until(() -> d.status().contains("\"running\":1"));
        TaskResult other = in.submit(hashing("b", "b", -1, "")).get(60, TimeUnit.SECONDS);
        assertThat(other.stdout().trim()).isEqualTo(sha256(b));
        TaskResult again = in.submit(hashing("a", "a", -1, "")).get(60, TimeUnit.SECONDS);
        assertThat(again.data().localHits()).as("a was evicted to make room for b").isZero();
        Files.createFile(gate);
        TaskResult r = reader.get(60, TimeUnit.SECONDS);
        assertThat(r.succeeded()).as(r.toString()).isTrue();
        assertThat(r.stdout().lines().toList()).as("before and after the eviction").containsExactly(sha256(a), sha256(a));
    }

    @Test
    void declaredOutputsReachTheStoreUnderFirstAvailableAndWithoutACacheOrTheTaskFails() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store"));
        Dispatcher d = dispatcher(new FirstAvailable());
        Process p = executor(d.port(), "plain", "--slots", "1", "--store", store.toString());
        d.awaitExecutors(1, Duration.ofSeconds(60));
        Instance in = instance(d.port(), "outputs");
        TaskResult ok = in.submit(TaskSpec.builder("/bin/sh", "-c", "mkdir -p sub && echo kept > sub/r.txt")
                .outputs(List.of(new TaskOutput("sub/r.txt", "results/r.txt"))).build()).get(60, TimeUnit.SECONDS);
        assertThat(ok.succeeded()).as(ok.execution().detail()).isTrue();
        assertThat(store.resolve("results/r.txt")).hasContent("kept");
        assertThat(ok.data().bytesWritten()).as("the store's traffic for it").isEqualTo("kept\n".length());
        assertThat(ok.data().bytesStore()).isZero();
        TaskResult missing = in.submit(TaskSpec.builder("/bin/true")
                .outputs(List.of(new TaskOutput("never.txt", "results/never"))).build()).get(60, TimeUnit.SECONDS);
        assertThat(missing.status()).isEqualTo(TaskStatus.OUTPUT_FAILED);
        assertThat(missing.succeeded()).isFalse();
        assertThat(missing.execution().detail()).contains("never.txt").contains("was not written");
        assertThat(missing.data().bytesWritten()).isZero();
        // the output outlives its executor: it is in the store, not only in a cache
        d.close();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(store.resolve("results/r.txt")).hasContent("kept");
    }

    @Test
    void aTemporaryOutputStaysHeldInTheCacheNotTheStoreUntilItsLastReaderHasFinished() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store"));
        Dispatcher d = dispatcher(new MaxComputeUtil());
        executor(d.port(), "holder", "--slots", "1", "--cache-size", "1m", "--store", store.toString(),
                "--cache-host", "127.0.0.1");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        Instance in = instance(d.port(), "temporaries");
        // an object that does not fit in the cache is written through after all
        TaskResult big = in.submit(TaskSpec.builder("/bin/sh", "-c", "head -c 2000000 /dev/zero > big.bin")
                .outputs(List.of(new TaskOutput("big.bin", "tmp/big", true))).build()).get(60, TimeUnit.SECONDS);
        assertThat(big.succeeded()).as(big.execution().detail()).isTrue();
        assertThat(store.resolve("tmp/big")).as("no room in the cache: saved to the store").hasSize(2_000_000);

        TaskResult p = in.submit(TaskSpec.builder("/bin/sh", "-c", "head -c 600000 /dev/urandom > t.bin && "
                + "sha256sum t.bin | cut -d' ' -f1 && echo done > log.txt").name("p")
                .outputs(List.of(new TaskOutput("t.bin", "tmp/t", true), new TaskOutput("log.txt", "logs/p")))
                .build()).get(60, TimeUnit.SECONDS);
        assertThat(p.succeeded()).as(p.execution().detail()).isTrue();
        String digest = p.stdout().trim();
        assertThat(store.resolve("tmp/t")).as("a temporary output never reaches the store").doesNotExist();
        assertThat(store.resolve("logs/p")).hasContent("done");
        assertThat(p.data().bytesWritten()).as("only the log was written to the store").isEqualTo(5);

        // held: 600 kB of the 1 MB cache are pinned, so another 600 kB object cannot be cached
        object(store, "filler", 600_000);
        TaskSpec filler = hashing("filler", "filler", 600_000, "");
        for (int i = 0; i < 2; i++) {
            TaskResult f = in.submit(filler).get(60, TimeUnit.SECONDS);
            assertThat(f.data().misses()).as("read through while the temporary object is held").isEqualTo(1);
        }
        TaskResult reader = in.submit(TaskSpec.builder("/bin/sh", "-c", "sha256sum in.bin | cut -d' ' -f1")
                .inputs(List.of(new TaskInput("tmp/t", "tmp/t", 600_000, "", TaskInput.AS_STORED, "in.bin")))
                .build()).get(60, TimeUnit.SECONDS);
        assertThat(reader.succeeded()).as(reader.execution().detail()).isTrue();
        assertThat(reader.stdout().trim()).isEqualTo(digest);
        assertThat(reader.data().localHits()).isEqualTo(1);
        assertThat(reader.data().bytesStore()).isZero();

        // its last reader finished: released, so it may be evicted for the filler, now kept
        assertThat(in.submit(filler).get(60, TimeUnit.SECONDS).data().misses()).isEqualTo(1);
        assertThat(in.submit(filler).get(60, TimeUnit.SECONDS).data().localHits()).as("cached this time").isEqualTo(1);
    }

    @Test
    void archivedOutputsGoIntoOneTarInTheStoreWhereTheirResultsSayEachReadableByOffsetAndByTar() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store"));
        Dispatcher d = dispatcher(new FirstAvailable());
        executor(d.port(), "archiver", "--slots", "2", "--store", store.toString());
        d.awaitExecutors(1, Duration.ofSeconds(60));
        Instance in = instance(d.port(), "archives");
        String longId = "results/" + "deep/".repeat(30) + "last.txt";
        List<TaskSpec> specs = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            String id = i == 7 ? longId : "results/r-" + i;
            specs.add(TaskSpec.builder("/bin/sh", "-c", "head -c 1024 /dev/urandom > out.bin && sha256sum out.bin | cut -d' ' -f1")
                    .outputs(List.of(new TaskOutput("out.bin", id, false, true))).build());
        }
        List<TaskResult> rs = all(in.submit(specs));
        java.util.Set<String> archives = new java.util.HashSet<>();
        for (int i = 0; i < rs.size(); i++) {
            TaskResult r = rs.get(i);
            assertThat(r.succeeded()).as(r.execution().detail()).isTrue();
            List<DataCodec.ArchivedOutput> index = DataCodec.archivedOf(r.execution());
            assertThat(index).singleElement().satisfies(e -> {
                assertThat(e.size()).isEqualTo(1024);
                assertThat(e.sha256()).as("the bytes the task wrote").isEqualTo(r.stdout().trim());
            });
            DataCodec.ArchivedOutput e = index.get(0);
            assertThat(e.id()).isEqualTo(i == 7 ? longId : "results/r-" + i);
            byte[] bytes = io.falkon.datacache.OutputArchive.read(store, new io.falkon.datacache.OutputArchive.Entry(
                    e.archive(), e.offset(), e.size(), e.sha256()));
            assertThat(sha256(bytes)).isEqualTo(r.stdout().trim());
            assertThat(r.data().bytesWritten()).isEqualTo(1024);
            archives.add(e.archive());
        }
        assertThat(store.resolve("results")).as("no file of its own per output").doesNotExist();
        assertThat(archives).singleElement().satisfies(a -> assertThat(a).startsWith("archives/archiver-"));
        Process tar = new ProcessBuilder("tar", "-tf", store.resolve(archives.iterator().next()).toString())
                .redirectErrorStream(true).start();
        List<String> names = new String(tar.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        assertThat(tar.waitFor()).as(String.join("\n", names)).isZero();
        assertThat(names).as("every entry, the long id whole").hasSize(120).contains(longId, "results/r-0");
    }

    @Test
    void anObjectLargerThanTheCacheIsReadThroughWithoutFailureOrSuspension() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store"));
        Dispatcher d = dispatcher(new GoodCacheCompute(0.9));
        executor(d.port(), "small", "--slots", "2", "--cache-size", "1m", "--store", store.toString());
        d.awaitExecutors(1, Duration.ofSeconds(60));
        byte[] big = new byte[2 << 20];
        new Random(7).nextBytes(big);
        Files.write(store.resolve("big"), big);
        Instance in = instance(d.port(), "big");
        List<TaskSpec> specs = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            specs.add(hashing("big", "big", big.length, ""));
        }
        for (TaskResult r : all(in.submit(specs))) {
            assertThat(r.succeeded()).as(r.execution().detail()).isTrue();
            assertThat(r.stdout().trim()).isEqualTo(sha256(big));
            assertThat(r.data().misses()).isEqualTo(1);
        }
        assertThat(d.status()).contains("\"suspended\":0").doesNotContain("\"state\":\"suspended\"");
    }

    @Test
    void aFetchFailureThatWouldRecurAnywhereIsNotRetried() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store"));
        Dispatcher d = dispatcher(new FirstAvailable());
        executor(d.port(), "perm", "--slots", "1", "--cache-size", "1m", "--store", store.toString());
        d.awaitExecutors(1, Duration.ofSeconds(60));
        Instance in = instance(d.port(), "perm");
        for (String source : List.of("../outside", "no-such-object", "file:relative")) {
            TaskResult r = in.submit(TaskSpec.builder("/bin/true")
                    .inputs(List.of(new TaskInput("x-" + source, source, -1, "", TaskInput.AS_STORED, "x"))).build())
                    .get(60, TimeUnit.SECONDS);
            assertThat(r.status()).isEqualTo(TaskStatus.FETCH_FAILED);
            assertThat(r.attempt()).as("%s: not retried", source).isZero();
            assertThat(r.execution().permanent()).isTrue();
        }
        assertThat(d.status()).contains("\"retried\":0");
    }

    String object(Path store, String name, int size) throws Exception {
        byte[] b = new byte[size];
        new Random(name.hashCode()).nextBytes(b);
        Files.write(store.resolve(name), b);
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }

    @Test
    void cachesServeRepeatedInputsLocallyAndFromPeersAndOutputsBecomeObjects() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store"));
        Dispatcher d = dispatcher(new GoodCacheCompute(0.9));
        for (int i = 0; i < 2; i++) {
            executor(d.port(), "cache" + i, "--slots", "2", "--cache-size", "4m", "--store", store.toString(),
                    "--cache-host", "127.0.0.1");
        }
        d.awaitExecutors(2, Duration.ofSeconds(60));
        List<String> digests = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            digests.add(object(store, "obj-" + i, 200_000));
        }
        Instance in = instance(d.port(), "data");
        List<TaskSpec> specs = new ArrayList<>();
        List<Integer> which = new ArrayList<>();
        Random rnd = new Random(3);
        for (int i = 0; i < 200; i++) {
            int k = rnd.nextInt(6);
            which.add(k);
            String id = "obj-" + k;
            specs.add(TaskSpec.builder("/bin/sh", "-c", "sha256sum " + id + " | cut -d' ' -f1")
                    .inputs(List.of(new TaskInput(id, id, 200_000, "", TaskInput.AS_STORED, ""))).build());
        }
        List<TaskResult> rs = all(in.submit(specs));
        DataStats total = DataStats.ZERO;
        for (int i = 0; i < rs.size(); i++) {
            TaskResult r = rs.get(i);
            assertThat(r.succeeded()).as(r.stderr() + r.execution().detail()).isTrue();
            assertThat(r.stdout().trim()).isEqualTo(digests.get(which.get(i)));
            total = total.plus(r.data());
        }
        assertThat(total.accesses()).isEqualTo(200);
        assertThat(total.misses()).as("each object comes from the store about once").isLessThanOrEqualTo(12);
        assertThat(total.localHits()).isGreaterThan(150);
        assertThat(total.bytesStore()).isEqualTo(total.misses() * 200_000);

        // an output registered on one executor is read by a later task as an input
        TaskSpec produce = TaskSpec.builder("/bin/sh", "-c", "echo made-by-task > out.txt")
                .outputs(List.of(new TaskOutput("out.txt", "derived/1"))).build();
        assertThat(in.submit(produce).get(60, TimeUnit.SECONDS).succeeded()).isTrue();
        assertThat(store.resolve("derived/1")).as("written through to the store").hasContent("made-by-task");
        TaskSpec consume = TaskSpec.builder("/bin/sh", "-c", "cat \"$FALKON_INPUT_0\"")
                .inputs(List.of(new TaskInput("derived/1", "derived/1", -1, "", TaskInput.AS_STORED,
                        "data.txt"))).build();
        TaskResult r = in.submit(consume).get(60, TimeUnit.SECONDS);
        assertThat(r.succeeded()).as(r.execution().detail()).isTrue();
        assertThat(r.stdout()).isEqualTo("made-by-task\n");
        assertThat(r.data().localHits() + r.data().peerHits()).isEqualTo(1);
    }

    @Test
    void aGatherTasksInputsThatOnePeerHoldsComeFromItEachVerifiedIntoOneDirectory() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store"));
        Dispatcher d = dispatcher(new MaxComputeUtil());
        String[] cache = {"--slots", "1", "--cache-size", "8m", "--store", store.toString(), "--cache-host", "127.0.0.1"};
        executor(d.port(), "holder", cache);
        d.awaitExecutors(1, Duration.ofSeconds(60));
        Instance in = instance(d.port(), "gather");
        List<String> digests = new ArrayList<>();
        List<TaskInput> parts = new ArrayList<>();
        List<TaskSpec> first = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            String id = "tiles/t-" + i;
            Files.createDirectories(store.resolve("tiles"));
            digests.add(object(store, id, 4000 + i));
            first.add(TaskSpec.builder("/bin/true").inputs(List.of(new TaskInput(id, id, 4000 + i, "",
                    TaskInput.AS_STORED, ""))).build());
            parts.add(new TaskInput(id, id, 4000 + i, "sha256:" + digests.get(i), TaskInput.AS_STORED, "parts/"));
        }
        // the holder reads every part once (from the store), then is kept busy until the gather is done
        assertThat(all(in.submit(first))).allSatisfy(r -> assertThat(r.data().misses()).isEqualTo(1));
        Path release = dir.resolve("release");
        CompletableFuture<TaskResult> busy = in.submit(TaskSpec.of("/bin/sh", "-c",
                "while [ ! -e '" + release + "' ]; do sleep 0.05; done"));
        await().atMost(Duration.ofMinutes(1)).until(() -> d.status().contains("\"busySlots\":1"));
        executor(d.port(), "gatherer", cache);
        d.awaitExecutors(2, Duration.ofSeconds(60));
        TaskResult r = in.submit(TaskSpec.builder("/bin/sh", "-c", "ls parts | sort -t- -k2 -n | while read p; do "
                + "sha256sum parts/$p | cut -d' ' -f1; done").inputs(parts).build()).get(5, TimeUnit.MINUTES);
        Files.writeString(release, "");
        assertThat(r.succeeded()).as("%s %s", r.stderr(), r.execution().detail()).isTrue();
        assertThat(r.executorId()).isEqualTo("gatherer");
        assertThat(r.stdout().lines().toList()).isEqualTo(digests);
        assertThat(r.data().peerHits()).as("every part from the holder's cache").isEqualTo(40);
        assertThat(r.data().misses()).isZero();
        assertThat(r.data().bytesPeer()).isEqualTo(40 * 4000 + 39 * 40 / 2);
        assertThat(busy.get(1, TimeUnit.MINUTES).succeeded()).isTrue();
    }

    @Test
    void aBatchRequestToTheCacheServerIsRefusedWithoutTheTokenTooLargeOrMalformedAndTheServerServesOn() throws Exception {
        Dispatcher d = dispatcher(new MaxComputeUtil());
        int cachePort = ClusterProcesses.freePort();
        executor(d.port(), "server", "--slots", "1", "--cache-size", "4m", "--cache-port", String.valueOf(cachePort),
                "--cache-host", "127.0.0.1");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        java.net.URI uri = java.net.URI.create("http://127.0.0.1:" + cachePort + "/objects");
        java.util.function.BiFunction<String, Boolean, Integer> post = (body, auth) -> {
            java.net.http.HttpRequest.Builder b = java.net.http.HttpRequest.newBuilder(uri)
                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body));
            if (auth) {
                b.header("Authorization", "Bearer " + TOKEN);
            }
            try {
                return http.send(b.build(), java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode();
            } catch (IOException e) {
                return -1; // the server may close instead of reading a body it refuses
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        };
        assertThat(post.apply("id=a&id=b", false)).as("no token").isIn(401, -1);
        assertThat(post.apply(String.join("&", java.util.Collections.nCopies(10_001, "id=x")), true)).as("10,001 ids")
                .isEqualTo(400);
        // a body whose ids could be read as other ids: one per line (the old form), a newline or a NUL
        // inside one, a '..', a broken escape, a field that is not an id
        for (String bad : List.of("nobody\nnor-this", "id=k%0Aevil&id=good", "id=res%2Fx%00-other",
                "id=a%2F..%2Fb", "id=%ZZ", "id=a&other=b")) {
            assertThat(post.apply(bad, true)).as(bad).isEqualTo(400);
        }
        assertThat(post.apply("y".repeat((1 << 20) + 1), true)).as("over 1 MiB").isIn(400, 413, -1);
        // still serving: an answer for ids it does not hold is an empty archive (two zero records)
        java.net.http.HttpResponse<byte[]> none = http.send(java.net.http.HttpRequest.newBuilder(uri)
                .header("Authorization", "Bearer " + TOKEN)
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("id=nobody&id=nor%2Fthis")).build(),
                java.net.http.HttpResponse.BodyHandlers.ofByteArray());
        assertThat(none.statusCode()).isEqualTo(200);
        assertThat(none.body()).hasSize(1024).containsOnly((byte) 0);
    }

    @Test
    void aTaskOfSeveralCoresTakesThatManySlotsAndTheCoresOfOverlappingTasksNeverExceedThem() throws Exception {
        Dispatcher d = dispatcher(new FirstAvailable());
        executor(d.port(), "packed", "--slots", "2", "--memory", "100m", "--disk", "300m");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        List<TaskSpec> specs = new ArrayList<>();
        for (int i = 0; i < 18; i++) {
            int cores = i % 3 == 0 ? 2 : 1;
            specs.add(TaskSpec.builder("/bin/sh", "-c", "sleep 0.05").resources(cores, 0).build());
        }
        List<TaskResult> results = all(instance(d.port(), "packed").submit(specs));
        assertThat(results).allSatisfy(r -> assertThat(r.succeeded()).as(r.toString()).isTrue());
        List<long[]> runs = new ArrayList<>();
        for (int i = 0; i < results.size(); i++) {
            runs.add(new long[]{results.get(i).execution().startedMicros(), results.get(i).execution().finishedMicros(),
                    specs.get(i).cores()});
        }
        assertThat(peakCores(runs)).as("cores of tasks running at once on 2 slots").isEqualTo(2);
        // more than it has: refused at submission, naming what it asked and what there is
        TaskResult tooWide = instance(d.port(), "too-wide").submit(TaskSpec.builder("/bin/true").resources(3, 0)
                .build()).get(1, TimeUnit.MINUTES);
        assertThat(tooWide.execution().status()).isEqualTo(TaskStatus.REJECTED);
        assertThat(tooWide.execution().detail()).contains("needs 3 cores")
                .contains("at most 2 slots, 100 MiB of memory, 300 MiB of disk");
        TaskResult tooBig = instance(d.port(), "too-big").submit(TaskSpec.builder("/bin/true").resources(1, 200)
                .build()).get(1, TimeUnit.MINUTES);
        assertThat(tooBig.execution().detail()).contains("needs 1 core, 200 MiB of memory");
        // scratch space as it advertised it: two tasks of 200 MiB never run at once in its 300
        List<TaskSpec> scratch = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            scratch.add(TaskSpec.builder("/bin/sh", "-c", "sleep 0.05").disk(200).build());
        }
        List<TaskResult> wrote = all(instance(d.port(), "scratch").submit(scratch));
        assertThat(wrote).allSatisfy(r -> assertThat(r.succeeded()).as(r.toString()).isTrue());
        List<long[]> disk = new ArrayList<>();
        for (TaskResult r : wrote) {
            disk.add(new long[]{r.execution().startedMicros(), r.execution().finishedMicros(), 200});
        }
        assertThat(peakCores(disk)).as("MiB of disk stated by tasks running at once, of 300").isEqualTo(200);
        TaskResult tooWideDisk = instance(d.port(), "too-much-disk").submit(TaskSpec.builder("/bin/true").disk(400)
                .build()).get(1, TimeUnit.MINUTES);
        assertThat(tooWideDisk.execution().detail()).contains("needs 1 core, 400 MiB of disk");
    }

    @Test
    void itAdvertisesTheFreeSpaceOfItsWorkingDirectoryAsDiskUnlessToldOtherwise() throws Exception {
        Dispatcher d = dispatcher(new FirstAvailable());
        executor(d.port(), "df", "--slots", "1", "--workdir", dir.toString());
        d.awaitExecutors(1, Duration.ofSeconds(60));
        long free = Files.getFileStore(dir).getUsableSpace() >> 20;
        // no more than it has free (give or take what this machine writes meanwhile): refused at once
        TaskResult refused = instance(d.port(), "df").submit(TaskSpec.builder("/bin/true").disk(free * 2 + 1024)
                .build()).get(1, TimeUnit.MINUTES);
        assertThat(refused.execution().status()).isEqualTo(TaskStatus.REJECTED);
        String detail = refused.execution().detail();
        long advertised = Long.parseLong(detail.replaceAll(".* (\\d+) MiB of disk$", "$1"));
        assertThat(advertised).as(detail).isBetween(free / 2, free * 2);
        assertThat(instance(d.port(), "df").submit(TaskSpec.builder("/bin/true").disk(Math.max(1, free / 4)).build())
                .get(1, TimeUnit.MINUTES).succeeded()).as("a quarter of it fits").isTrue();
    }

    /**
     * The most cores in use at once, from each task's {start, end, cores} as its executor timed it (a
     * slot is free again only after its task's end, so a start at the very tick of an end follows it).
     */
    static int peakCores(List<long[]> runs) {
        List<long[]> edges = new ArrayList<>();
        for (long[] r : runs) {
            edges.add(new long[]{r[0], r[2]});
            edges.add(new long[]{r[1], -r[2]});
        }
        edges.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1])); // ends first
        int busy = 0;
        int peak = 0;
        for (long[] e : edges) {
            busy += (int) e[1];
            peak = Math.max(peak, busy);
        }
        return peak;
    }

    @Test
    void anObjectTheQueuedTasksOfEveryExecutorReadIsMulticastAheadOfThemWithOneStoreRead() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store"));
        try (HoldingStore http = new HoldingStore(1)) {
            byte[] db = new byte[3_000_000];
            new Random(11).nextBytes(db);
            String digest = sha256(db);
            String url = http.put("db", db);
            Dispatcher d = dispatcher(new MaxComputeUtil());
            for (int i = 0; i < 4; i++) {
                executor(d.port(), "tree" + i, "--slots", "1", "--cache-size", "16m", "--store", store.toString(),
                        "--cache-host", "127.0.0.1");
            }
            d.awaitExecutors(4, Duration.ofSeconds(60));
            Instance in = instance(d.port(), "multicast");
            Path release = dir.resolve("release");
            List<CompletableFuture<TaskResult>> busy = new ArrayList<>();
            for (int i = 0; i < 4; i++) { // every slot busy: the readers stay queued
                busy.add(in.submit(TaskSpec.of("/bin/sh", "-c", "while [ ! -e '" + release + "' ]; do sleep 0.05; done")));
            }
            await().atMost(Duration.ofMinutes(1)).until(() -> d.status().contains("\"busySlots\":4"));
            List<TaskSpec> readers = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                readers.add(hashing("db", url, db.length, "sha256:" + digest));
            }
            List<CompletableFuture<TaskResult>> read = in.submit(readers);
            // ahead of demand: every executor gets a copy while its slot is still busy
            await().atMost(Duration.ofMinutes(2)).until(() -> d.status().split("\"cachedObjects\":1", -1).length - 1 == 4);
            assertThat(http.served()).as("the store is read once; the other copies came from peers").isEqualTo(1);
            Files.writeString(release, "");
            all(busy);
            for (TaskResult r : all(read)) {
                assertThat(r.succeeded()).as(r.execution().detail()).isTrue();
                assertThat(r.stdout().trim()).isEqualTo(digest);
                assertThat(r.data().localHits()).as("already here when it ran").isEqualTo(1);
            }
            assertThat(http.served()).isEqualTo(1);
        }
    }

    @Test
    void aGatherTasksInputsAreFetchedConcurrentlyIntoOneDirectoryEachVerifiedWithAndWithoutACache() throws Exception {
        try (HoldingStore http = new HoldingStore(2)) {
            List<String> digests = new ArrayList<>();
            List<TaskInput> inputs = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                byte[] b = new byte[100_000];
                new Random(i).nextBytes(b);
                digests.add(sha256(b));
                // "parts/": each object goes into the sandbox's parts/ under its own name, where a gather
                // program (mAdd, a BLAST merge) reads the whole directory
                inputs.add(new TaskInput("gather/part-" + i, http.put("part-" + i, b), b.length, "sha256:"
                        + digests.get(i), TaskInput.AS_STORED, "parts/"));
            }
            TaskSpec gather = TaskSpec.builder("/bin/sh", "-c", "test \"$FALKON_INPUT_7\" = \"$PWD/parts/part-7\" "
                    + "&& ls parts | sort -t- -k2 -n | while read p; do sha256sum parts/$p | cut -d' ' -f1; done")
                    .inputs(inputs).build();
            for (boolean cached : new boolean[]{true, false}) {
                http.reset();
                Dispatcher d = dispatcher(new FirstAvailable());
                String id = cached ? "gather-cached" : "gather-plain";
                if (cached) {
                    executor(d.port(), id, "--slots", "1", "--cache-size", "4m");
                } else {
                    executor(d.port(), id, "--slots", "1");
                }
                d.awaitExecutors(1, Duration.ofSeconds(60));
                TaskResult r = instance(d.port(), id).submit(gather).get(5, TimeUnit.MINUTES);
                assertThat(r.succeeded()).as("%s: %s %s", id, r.stderr(), r.execution().detail()).isTrue();
                assertThat(r.stdout().lines().toList()).as(id).isEqualTo(digests);
                assertThat(r.data().misses()).as(id).isEqualTo(8);
                // at once: a client fetching one after another never has two open. (Its bound, 4, is not
                // checked here: the store counts a request open until its handler ends, a little after
                // the client has moved on to its next one.)
                assertThat(http.peak()).as("%s: inputs fetched at once", id).isGreaterThanOrEqualTo(2);
                assertThat(http.served()).as(id).isEqualTo(8);
            }
        }
    }

    /** The persistent worker of the worker tests, run with python3 and the repository's falkon package. */
    static List<String> contractWorker() {
        Path script = Path.of("src/test/resources/workers/contract_worker.py").toAbsolutePath();
        return List.of("python3", script.toString());
    }

    static TaskSpec.Builder forWorker(List<String> worker, String payload, String... argv) {
        return TaskSpec.builder(argv).env("PYTHONPATH", Path.of("").toAbsolutePath().getParent().resolve("python/src")
                .toString()).worker(worker, payload.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    static String pid(TaskResult r) {
        String out = r.stdout();
        return out.substring(out.indexOf("pid=") + 4, out.indexOf(' ', out.indexOf("pid=")));
    }

    @Test
    void tasksForAPersistentWorkerAreHandedToOneResidentProcessPerSlotWithTheirArgumentsEnvironmentDirectoryAndPayload()
            throws Exception {
        Dispatcher d = dispatcher(new FirstAvailable());
        executor(d.port(), "resident", "--slots", "2", "--output-cap", "1000");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        Path work = Files.createDirectories(dir.resolve("work"));
        List<TaskSpec> specs = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            specs.add(forWorker(contractWorker(), "p" + i, "echo", "t" + i).env("MARK", "m" + i)
                    .workDir(work.toString()).build());
        }
        specs.add(forWorker(contractWorker(), "", "print").build());
        specs.add(forWorker(contractWorker(), "", "fail").build());
        specs.add(forWorker(contractWorker(), "", "big", "5000").build());
        List<TaskResult> results = all(instance(d.port(), "resident").submit(specs));
        java.util.Set<String> pids = new java.util.HashSet<>();
        for (int i = 0; i < 60; i++) {
            TaskResult r = results.get(i);
            assertThat(r.succeeded()).as(r.toString()).isTrue();
            assertThat(r.stdout()).contains("argv=echo t" + i + " ", "cwd=" + work, "mark=m" + i,
                    "payload=p" + i + "\n");
            pids.add(pid(r));
        }
        // (each of those stated its own MARK: a worker is started with a task's environment, so each
        // needed a worker of its own; tasks of one environment share one, below)
        assertThat(results.get(60).succeeded()).isTrue();
        assertThat(results.get(60).stdout()).as("a task's print goes to the worker's stderr, not the framing")
                .startsWith("pid=").doesNotContain("printed");
        assertThat(results.get(61).execution().exitCode()).isEqualTo(3);
        assertThat(results.get(61).stderr()).isEqualTo("failed on purpose\n");
        assertThat(results.get(62).stdout()).hasSize(1000);
        assertThat(results.get(62).execution().stdoutTruncated()).isTrue();
        // one environment: one resident process per slot serves them all
        List<TaskSpec> same = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            same.add(forWorker(contractWorker(), "", "echo", "s" + i).build());
        }
        java.util.Set<String> shared = new java.util.HashSet<>();
        for (TaskResult r : all(instance(d.port(), "shared").submit(same))) {
            assertThat(r.succeeded()).as(r.toString()).isTrue();
            shared.add(pid(r));
        }
        assertThat(shared).as("worker processes for 40 tasks on 2 slots").hasSizeBetween(1, 2);
    }

    @Test
    void aWorkerThatDiesOverrunsOrBreaksTheFramingIsReportedAndReplacedAndOneMayServeOnlySoMany() throws Exception {
        Dispatcher d = dispatcher(new FirstAvailable());
        executor(d.port(), "replaced", "--slots", "1", "--worker-max-tasks", "4", "--worker-max-memory", "100m");
        d.awaitExecutors(1, Duration.ofSeconds(60));
        Instance inst = instance(d.port(), "replaced");
        Path work = Files.createDirectories(dir.resolve("w"));
        java.util.function.Function<TaskSpec, TaskResult> run = spec -> inst.submit(spec).join();
        String first = pid(run.apply(forWorker(contractWorker(), "", "echo").build()));
        TaskResult died = run.apply(forWorker(contractWorker(), "", "die", "7").build());
        assertThat(died.execution().status()).as("no answer: the task did not run").isEqualTo(TaskStatus.LAUNCH_FAILED);
        assertThat(died.execution().permanent()).isTrue();
        assertThat(died.execution().detail()).contains("exited (exit status 7) without answering task");
        String second = pid(run.apply(forWorker(contractWorker(), "", "echo").build()));
        assertThat(second).isNotEqualTo(first);
        TaskResult overran = run.apply(forWorker(contractWorker(), "", "sleep", "60").wallTime(Duration.ofSeconds(1))
                .workDir(work.toString()).build());
        assertThat(overran.execution().status()).isEqualTo(TaskStatus.TIMEOUT);
        String third = pid(run.apply(forWorker(contractWorker(), "", "echo").build()));
        assertThat(third).isNotEqualTo(second);
        // killed from outside while it runs a task: that task is reported, the next one served
        Files.deleteIfExists(work.resolve("started"));
        CompletableFuture<TaskResult> killed = inst.submit(forWorker(contractWorker(), "", "sleep", "60")
                .workDir(work.toString()).build());
        await().atMost(Duration.ofMinutes(1)).until(() -> Files.exists(work.resolve("started")));
        ProcessHandle.of(Long.parseLong(third)).orElseThrow().destroyForcibly();
        TaskResult k = killed.get(1, TimeUnit.MINUTES);
        assertThat(k.execution().status()).isEqualTo(TaskStatus.LAUNCH_FAILED);
        assertThat(k.execution().detail()).contains("was killed by signal 9 before answering task");
        // the first task of a fresh worker leaves it holding 150 MiB: over --worker-max-memory, it is
        // replaced before the next task (which --worker-max-tasks 4 alone would not do)
        TaskResult grew = run.apply(forWorker(contractWorker(), "", "grow", "150").build());
        assertThat(grew.succeeded()).as(grew.toString()).isTrue();
        String grown = pid(grew);
        TaskResult next = run.apply(forWorker(contractWorker(), "", "echo").build());
        assertThat(pid(next)).as("the worker past its memory bound was replaced").isNotEqualTo(grown);
        // one that dies while idle (this one has served one task of its four) is replaced, and the
        // next task does not pay for it
        String idle = pid(next);
        ProcessHandle.of(Long.parseLong(idle)).orElseThrow().destroyForcibly();
        Path status = Path.of("/proc", idle, "status");
        await().atMost(Duration.ofMinutes(1)).until(() -> !Files.exists(status)
                || Files.readString(status).contains("State:\tZ"));
        TaskResult after = run.apply(forWorker(contractWorker(), "", "echo").build());
        assertThat(after.succeeded()).as(after.toString()).isTrue();
        assertThat(pid(after)).isNotEqualTo(idle);
        // after --worker-max-tasks 4 tasks a worker is replaced
        java.util.Map<String, Integer> served = new java.util.HashMap<>();
        for (int i = 0; i < 10; i++) {
            served.merge(pid(run.apply(forWorker(contractWorker(), "", "echo").build())), 1, Integer::sum);
        }
        assertThat(served.values()).allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(4));
        assertThat(served).hasSizeGreaterThanOrEqualTo(3);
        // a worker that answers with bytes that are no response, and one that cannot start
        TaskResult garbled = run.apply(TaskSpec.builder("x").worker(List.of("/bin/sh", "-c",
                "head -c 4 >/dev/null; printf '\\377\\377\\377\\377'; sleep 60"), new byte[0]).build());
        assertThat(garbled.execution().status()).isEqualTo(TaskStatus.LAUNCH_FAILED);
        assertThat(garbled.execution().detail()).contains("broke the framing");
        TaskResult missing = run.apply(TaskSpec.builder("x").worker(List.of(dir.resolve("no-such-worker").toString()),
                new byte[0]).build());
        assertThat(missing.execution().status()).isEqualTo(TaskStatus.LAUNCH_FAILED);
        assertThat(missing.execution().detail()).contains("cannot start worker");
        assertThat(pid(run.apply(forWorker(contractWorker(), "", "echo").build()))).as("served on").isNotEmpty();
    }

    @Test
    void survivesADispatcherCrashAndRegistersWithItsSuccessor() throws Exception {
        int port = ClusterProcesses.freePort();
        Path journal = dir.resolve("journal");
        try (ClusterProcesses procs = new ClusterProcesses(dir)) {
            Path tokenFile = dir.resolve("token");
            TokenSource.write(tokenFile, Token.of(TOKEN));
            Process dispatcher = procs.dispatcher(port, "--journal", journal.toString(), "--fsync", "BATCH",
                    "--token-file", tokenFile.toString());
            Process executor = executor(port, "survivor", "--slots", "2", "--reconnect-for", "120");
            try (FalkonClient client = FalkonClient.connect("127.0.0.1:" + port,
                    ClientOptions.defaults().withReconnectFor(Duration.ofSeconds(120)).withToken(TOKEN));
                 Instance in = client.createInstance("restart")) {
                List<TaskSpec> specs = new ArrayList<>();
                for (int i = 0; i < 1000; i++) {
                    specs.add(TaskSpec.builder("sleep", "0.01").retries(10).build());
                }
                AtomicInteger done = new AtomicInteger();
                in.onResult(x -> done.incrementAndGet());
                List<CompletableFuture<TaskResult>> fs = in.submit(specs);
                await().atMost(Duration.ofMinutes(2)).until(() -> done.get() >= 200);
                ClusterProcesses.kill9(dispatcher);
                procs.dispatcher(port, "--journal", journal.toString(), "--fsync", "BATCH", "--token-file",
                        tokenFile.toString());
                List<TaskResult> rs = all(fs);
                assertThat(rs).allSatisfy(x -> assertThat(x.succeeded()).as(x.toString()).isTrue());
                assertThat(done.get()).as("one result per task").isEqualTo(1000);
                assertThat(rs.get(rs.size() - 1).executorId()).isEqualTo("survivor");
            }
            assertThat(executor.isAlive()).as("the same executor process carried on").isTrue();
        }
    }
}
