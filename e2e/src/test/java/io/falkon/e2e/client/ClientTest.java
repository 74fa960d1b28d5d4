package io.falkon.e2e.client;

import io.falkon.client.ClientOptions;
import io.falkon.client.ConnectionLostException;
import io.falkon.client.FalkonClient;
import io.falkon.client.FalkonException;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskStatus;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The client library against a live dispatcher and executors running real processes. */
class ClientTest {

    @Test
    void aClientKeepsTheHeartbeatTheDispatcherAnnouncesWhileItWaits() throws Exception {
        // 300 ms: 900 ms of silence is a dead peer; a client on its own 5 s beat would be cut meanwhile
        try (Topology t = new Topology(DispatcherConfig.local().withHeartbeatMillis(300), 1, 1);
             FalkonClient c = t.client(ClientOptions.defaults().withReconnectFor(Duration.ZERO));
             Instance in = c.createInstance("patient")) {
            TaskResult r = in.submit(TaskSpec.of("sleep", "2.5")).get(60, TimeUnit.SECONDS);
            assertThat(r.succeeded()).as("%s", r).isTrue();
            assertThat(in.submit(TaskSpec.of("true")).get(30, TimeUnit.SECONDS).succeeded()).isTrue();
        }
    }

    @Test
    void resultsCarryTheProcessesOutputExitCodeAndTimings() throws Exception {
        try (Topology t = new Topology(2, 2); FalkonClient client = t.client(); Instance in = client.createInstance()) {
            List<CompletableFuture<TaskResult>> fs = in.submit(List.of(
                    TaskSpec.shell("echo hello; echo oops >&2"),
                    TaskSpec.shell("exit 7"),
                    TaskSpec.builder("/bin/sh", "-c", "printf %s \"$X\"").env("X", "from-env").build()));
            TaskResult hello = fs.get(0).get(30, TimeUnit.SECONDS);
            assertThat(hello.succeeded()).isTrue();
            assertThat(hello.stdout()).isEqualTo("hello\n");
            assertThat(hello.stderr()).isEqualTo("oops\n");
            assertThat(hello.executorId()).startsWith("exec-");
            assertThat(hello.dispatchedMicros()).isGreaterThanOrEqualTo(hello.submittedMicros());
            assertThat(hello.execution().startedMicros()).isPositive();
            assertThat(hello.deliveredMicros()).isGreaterThanOrEqualTo(hello.completedMicros() - 1_000_000);
            TaskResult seven = fs.get(1).get(30, TimeUnit.SECONDS);
            assertThat(seven.succeeded()).isFalse();
            assertThat(seven.status()).isEqualTo(TaskStatus.EXITED);
            assertThat(seven.exitCode()).isEqualTo(7);
            assertThat(fs.get(2).get(30, TimeUnit.SECONDS).stdout()).isEqualTo("from-env");
        }
    }

    @Test
    void twoConcurrentClientsEachSeeOnlyTheirOwnResults() throws Exception {
        try (Topology t = new Topology(2, 2)) {
            ExecutorService pool = Executors.newFixedThreadPool(2);
            List<Future<List<String>>> outputs = new ArrayList<>();
            for (String name : List.of("alice", "bob")) {
                outputs.add(pool.submit(() -> {
                    try (FalkonClient c = t.client(); Instance in = c.createInstance(name)) {
                        List<String> seen = new ArrayList<>();
                        in.onResult(r -> {
                            synchronized (seen) {
                                seen.add(r.stdout().trim());
                            }
                        });
                        List<TaskSpec> specs = new ArrayList<>();
                        for (int i = 0; i < 200; i++) {
                            specs.add(TaskSpec.of("echo", name + "-" + i));
                        }
                        in.submit(specs);
                        in.awaitAll();
                        synchronized (seen) {
                            return new ArrayList<>(seen);
                        }
                    }
                }));
            }
            List<String> alice = outputs.get(0).get(120, TimeUnit.SECONDS);
            List<String> bob = outputs.get(1).get(120, TimeUnit.SECONDS);
            pool.shutdown();
            assertThat(alice).hasSize(200).allMatch(s -> s.startsWith("alice-"));
            assertThat(bob).hasSize(200).allMatch(s -> s.startsWith("bob-"));
            assertThat(alice.stream().distinct().count()).isEqualTo(200);
        }
    }

    @Test
    void submitBlocksAtMaxInFlightAndEverythingStillCompletes() throws Exception {
        try (Topology t = new Topology(1, 4);
             FalkonClient client = t.client(ClientOptions.defaults().withBundleSize(5).withMaxInFlight(10));
             Instance in = client.createInstance()) {
            AtomicInteger maxSeen = new AtomicInteger();
            in.onResult(r -> maxSeen.accumulateAndGet(in.outstanding(), Math::max));
            List<TaskSpec> specs = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                specs.add(TaskSpec.of("/bin/true"));
            }
            List<CompletableFuture<TaskResult>> fs = in.submit(specs);
            assertThat(in.awaitAll(Duration.ofSeconds(60))).isTrue();
            assertThat(fs).allMatch(f -> f.join().succeeded());
            assertThat(maxSeen.get()).isLessThanOrEqualTo(10);
        }
    }

    @Test
    void singleSubmissionsAreCoalescedIntoBundles() throws Exception {
        try (Topology t = new Topology(1, 2);
             FalkonClient client = t.client(ClientOptions.defaults().withBundleSize(50));
             Instance in = client.createInstance()) {
            List<CompletableFuture<TaskResult>> fs = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                fs.add(in.submit(TaskSpec.of("/bin/true")));
            }
            CompletableFuture.allOf(fs.toArray(CompletableFuture<?>[]::new)).get(60, TimeUnit.SECONDS);
            assertThat(fs).allMatch(f -> f.join().succeeded());
            assertThat(fs.stream().map(f -> f.join().taskId()).collect(Collectors.toSet())).hasSize(500);
        }
    }

    @Test
    void closingAnInstanceCancelsItsUnfinishedTasks() throws Exception {
        try (Topology t = new Topology(1, 1); FalkonClient client = t.client()) {
            Instance in = client.createInstance();
            List<CompletableFuture<TaskResult>> fs = in.submit(List.of(TaskSpec.of("sleep", "60"),
                    TaskSpec.of("sleep", "60"), TaskSpec.of("sleep", "60")));
            // wait until the first really runs on the executor
            await().atMost(Duration.ofSeconds(30)).until(() -> client.status().contains("\"running\":1"));
            in.close();
            for (CompletableFuture<TaskResult> f : fs) {
                assertThat(f.get(10, TimeUnit.SECONDS).status()).isEqualTo(TaskStatus.CANCELLED);
            }
            assertThatThrownBy(() -> in.submit(TaskSpec.of("true"))).isInstanceOf(FalkonException.class)
                    .hasMessageContaining("closed");
            // the executor got its slot back: new work runs
            try (Instance again = client.createInstance()) {
                assertThat(again.submit(TaskSpec.of("/bin/true")).get(30, TimeUnit.SECONDS).succeeded()).isTrue();
            }
        }
    }

    @Test
    void anUnreachableDispatcherIsAOneLineError() {
        assertThatThrownBy(() -> FalkonClient.connect("127.0.0.1:1")).isInstanceOf(FalkonException.class)
                .hasMessageStartingWith("cannot connect to dispatcher at 127.0.0.1:1");
        assertThatThrownBy(() -> FalkonClient.connect("no port:x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a dispatcher address");
    }

    @Test
    void aWrongTokenIsRefusedAtTheHandshake() throws Exception {
        try (Topology t = new Topology(DispatcherConfig.local().withToken("s3cret"), 1, 1)) {
            assertThatThrownBy(() -> FalkonClient.connect(t.address(), ClientOptions.defaults().withToken("nope")))
                    .isInstanceOf(FalkonException.class).hasMessageContaining("wrong token")
                    .extracting(e -> ((FalkonException) e).code()).isEqualTo(ErrorCode.UNAUTHORIZED);
            try (FalkonClient ok = t.client(); Instance in = ok.createInstance()) {
                assertThat(in.submit(TaskSpec.of("/bin/true")).get(30, TimeUnit.SECONDS).succeeded()).isTrue();
            }
        }
    }

    @Test
    void whenTheDispatcherGoesAwayOutstandingFuturesFail() throws Exception {
        Topology t = new Topology(0, 1); // no executor: the task stays queued until the dispatcher goes
        FalkonClient client = t.client(ClientOptions.defaults().withReconnectFor(Duration.ZERO));
        Instance in = client.createInstance();
        CompletableFuture<TaskResult> f = in.submit(TaskSpec.of("sleep", "60"));
        await().atMost(Duration.ofSeconds(30)).until(() -> in.status().contains("\"queued\":1"));
        t.close();
        assertThatThrownBy(() -> f.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(ConnectionLostException.class);
        assertThatThrownBy(() -> in.submit(TaskSpec.of("true"))).isInstanceOf(FalkonException.class);
        client.close();
    }

    @Test
    void instanceStatusCountsItsOwnTasks() throws Exception {
        try (Topology t = new Topology(1, 2); FalkonClient client = t.client(); Instance in = client.createInstance("st")) {
            in.submit(List.of(TaskSpec.of("/bin/true"), TaskSpec.of("/bin/false")));
            in.awaitAll();
            String status = in.status();
            assertThat(status).contains("\"completed\":2").contains("\"succeeded\":1").contains("\"failed\":1")
                    .contains("\"name\":\"st\"");
        }
    }
}
