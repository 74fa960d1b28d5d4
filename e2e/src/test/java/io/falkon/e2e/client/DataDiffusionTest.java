package io.falkon.e2e.client;

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
import io.falkon.executor.Executor;
import io.falkon.executor.ExecutorConfig;
import io.falkon.protocol.DataStats;
import io.falkon.protocol.Message;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.TaskInput;
import io.falkon.protocol.TaskOutput;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import java.util.Map;
import java.util.Random;

/** Data diffusion end to end: real executors with real caches, peers and a shared store directory. */
class DataDiffusionTest {
    @TempDir
    Path store;
    final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    Dispatcher dispatcher(DispatchPolicy policy) {
        Dispatcher d = Dispatcher.start(DispatcherConfig.local().withPolicy(policy));
        closing.add(d);
        return d;
    }

    Executor executor(Dispatcher d, String id, int slots) {
        Executor e = Executor.start(ExecutorConfig.of("127.0.0.1", d.port()).withId(id).withSlots(slots)
                .withToken(d.token()).withCache(4 << 20, "lru", store).toBuilder().cacheHost("127.0.0.1").build());
        closing.add(e);
        return e;
    }

    FalkonClient client(Dispatcher d) {
        FalkonClient c = FalkonClient.connect("127.0.0.1:" + d.port(), ClientOptions.defaults().withToken(d.token()));
        closing.add(c);
        return c;
    }

    String object(String name, int size) throws Exception {
        byte[] b = new byte[size];
        new Random(name.hashCode()).nextBytes(b);
        Files.write(store.resolve(name), b);
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }

    /** A task that prints the SHA-256 of its input, reading it by name from its working directory. */
    static TaskSpec digestOf(String id) {
        return TaskSpec.builder("/bin/sh", "-c", "sha256sum " + id + " | cut -d' ' -f1")
                .inputs(List.of(new TaskInput(id, id, -1, "", TaskInput.AS_STORED, ""))).build();
    }

    @Test
    void repeatedInputsAreServedLocallyAndByPeersAndTasksSeeTheRightBytes() throws Exception {
        Dispatcher d = dispatcher(new GoodCacheCompute(0.9));
        for (int i = 0; i < 3; i++) {
            executor(d, "node" + i, 2);
        }
        d.awaitExecutors(3, Duration.ofSeconds(30));
        List<String> ids = new ArrayList<>();
        List<String> digests = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            ids.add("obj-" + i);
            digests.add(object("obj-" + i, 200_000));
        }
        Instance in = client(d).createInstance("diffusion");
        List<TaskSpec> specs = new ArrayList<>();
        List<Integer> which = new ArrayList<>();
        Random rnd = new Random(3);
        for (int i = 0; i < 300; i++) {
            int k = rnd.nextInt(ids.size());
            which.add(k);
            specs.add(digestOf(ids.get(k)));
        }
        List<CompletableFuture<TaskResult>> fs = in.submit(specs);
        DataStats total = DataStats.ZERO;
        for (int i = 0; i < fs.size(); i++) {
            TaskResult r = fs.get(i).get(60, TimeUnit.SECONDS);
            assertThat(r.succeeded()).as(r.stderr() + r.execution().detail()).isTrue();
            assertThat(r.stdout().trim()).isEqualTo(digests.get(which.get(i)));
            total = total.plus(r.data());
        }
        assertThat(total.accesses()).isEqualTo(300);
        assertThat(total.misses()).as("each object comes from the store about once").isLessThanOrEqualTo(12);
        assertThat(total.localHits()).isGreaterThan(200);
        assertThat(total.bytesStore()).isEqualTo(total.misses() * 200_000);
        String status = in.status();
        assertThat(client(d).status()).contains("\"localHits\":" + total.localHits());
        assertThat(status).contains("\"completed\":300");
    }

    @Test
    void aFreeExecutorFetchesFromTheBusyHolderUnderMaxComputeUtil() throws Exception {
        Dispatcher d = dispatcher(new MaxComputeUtil());
        Executor a = executor(d, "a", 1);
        d.awaitExecutors(1, Duration.ofSeconds(30));
        object("x", 100_000);
        Instance in = client(d).createInstance("peer");
        assertThat(in.submit(digestOf("x")).get(30, TimeUnit.SECONDS).data().misses()).isEqualTo(1);
        assertThat(a.id()).isEqualTo("a");
        // a is now the holder; keep it busy (until the test lets it go: no sleep as a clock), then bring b
        Path gate = store.resolve("gate");
        CompletableFuture<TaskResult> busy = in.submit(TaskSpec.of("/bin/sh", "-c",
                "while [ ! -e '" + gate + "' ]; do sleep 0.05; done"));
        executor(d, "b", 1);
        d.awaitExecutors(2, Duration.ofSeconds(30));
        TaskResult onB = in.submit(digestOf("x")).get(30, TimeUnit.SECONDS);
        Files.createFile(gate);
        assertThat(onB.executorId()).isEqualTo("b");
        assertThat(onB.data().peerHits()).isEqualTo(1);
        assertThat(onB.data().bytesPeer()).isEqualTo(100_000);
        assertThat(busy.get(30, TimeUnit.SECONDS).succeeded()).isTrue();
    }

    @Test
    void aStaleHintFallsBackToTheSharedStore() throws Exception {
        Dispatcher d = dispatcher(new MaxComputeUtil());
        int dead;
        try (ServerSocket s = new ServerSocket(0)) {
            dead = s.getLocalPort();
        }
        object("y", 50_000);
        // an executor that claims to cache y, behind a cache port nobody listens on, with no free slot
        try (RawPeer liar = new RawPeer(d.port())) {
            liar.send(Message.Hello.of(Protocol.ROLE_EXECUTOR, d.token().value(), "liar"));
            liar.read();
            liar.send(new Message.Register("liar", "127.0.0.1", 1, 0, Map.of("cachePort",
                    Integer.toString(dead), "cacheHost", "127.0.0.1")));
            liar.send(new Message.CacheUpdate(true, List.of(new Message.CachedObject("y", 50_000)), List.of()));
            executor(d, "honest", 1);
            d.awaitExecutors(2, Duration.ofSeconds(30));
            TaskResult r = client(d).createInstance("stale").submit(digestOf("y")).get(30, TimeUnit.SECONDS);
            assertThat(r.succeeded()).isTrue();
            assertThat(r.executorId()).isEqualTo("honest");
            assertThat(r.data().misses()).as("read from the store after the hint failed").isEqualTo(1);
            assertThat(r.data().peerHits()).isZero();
        }
    }

    @Test
    void aTasksOutputBecomesAnObjectOtherTasksRead() throws Exception {
        Dispatcher d = dispatcher(new GoodCacheCompute());
        executor(d, "only", 2);
        d.awaitExecutors(1, Duration.ofSeconds(30));
        Instance in = client(d).createInstance("outputs");
        TaskSpec produce = TaskSpec.builder("/bin/sh", "-c", "echo made-by-task > out.txt")
                .outputs(List.of(new TaskOutput("out.txt", "derived/1"))).build();
        assertThat(in.submit(produce).get(30, TimeUnit.SECONDS).succeeded()).isTrue();
        TaskSpec consume = TaskSpec.builder("/bin/sh", "-c", "cat \"$FALKON_INPUT_0\"; echo \"$FALKON_INPUTS\"")
                .inputs(List.of(new TaskInput("derived/1", "not/in/the/store", -1, "", TaskInput.AS_STORED,
                        "data.txt"))).build();
        TaskResult r = in.submit(consume).get(30, TimeUnit.SECONDS);
        assertThat(r.succeeded()).as(r.execution().detail()).isTrue();
        assertThat(r.stdout()).startsWith("made-by-task\n").contains("data.txt");
        assertThat(r.data().localHits()).isEqualTo(1);
    }

    @Test
    void firstAvailableReadsEveryInputFromTheStoreAndAMissingObjectIsAFetchFailure() throws Exception {
        Dispatcher d = dispatcher(new FirstAvailable());
        executor(d, "fa", 1);
        d.awaitExecutors(1, Duration.ofSeconds(30));
        object("z", 10_000);
        Instance in = client(d).createInstance("fa");
        for (int i = 0; i < 3; i++) {
            TaskResult r = in.submit(digestOf("z")).get(30, TimeUnit.SECONDS);
            assertThat(r.data().misses()).isEqualTo(1);
            assertThat(r.data().localHits()).isZero();
        }
        TaskResult missing = in.submit(TaskSpec.builder("true").retries(0)
                .inputs(List.of(TaskInput.of("ghost", "no/such/object"))).build()).get(30, TimeUnit.SECONDS);
        assertThat(missing.status()).isEqualTo(TaskStatus.FETCH_FAILED);
        assertThat(missing.execution().detail()).contains("no/such/object");
    }
}
