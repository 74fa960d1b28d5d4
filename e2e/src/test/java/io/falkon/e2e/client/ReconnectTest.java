package io.falkon.e2e.client;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.FalkonException;
import io.falkon.client.Instance;
import io.falkon.client.InstanceKey;
import io.falkon.client.TaskResult;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.dispatcher.journal.FsyncPolicy;
import io.falkon.executor.Executor;
import io.falkon.executor.ExecutorConfig;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import io.falkon.protocol.Message;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.TaskSpecCodec;
import java.util.concurrent.CopyOnWriteArrayList;

/** A dispatcher restarted under a client and its executors: nothing accepted is lost. */
class ReconnectTest {
    /** Both dispatchers of a restart share the deployment's token, as a restarted one reads its file. */
    static final String TOKEN = "reconnect-test-token";

    @TempDir
    Path journal;

    @Test
    void clientAndExecutorsCarryOnAcrossADispatcherRestartWithAJournal() throws Exception {
        DispatcherConfig cfg = DispatcherConfig.local().withToken(TOKEN).withJournal(journal, FsyncPolicy.ALWAYS);
        Dispatcher first = Dispatcher.start(cfg);
        int port = first.port();
        Executor exec = Executor.start(ExecutorConfig.of("127.0.0.1", port).withId("survivor").withSlots(4)
                .withToken(TOKEN)
                .withReconnectFor(Duration.ofSeconds(60)));
        first.awaitExecutors(1, Duration.ofSeconds(30));
        FalkonClient client = FalkonClient.connect("127.0.0.1:" + port, ClientOptions.defaults().withToken(TOKEN));
        try {
            Instance in = client.createInstance("restart");
            ConcurrentHashMap<Long, AtomicInteger> seen = new ConcurrentHashMap<>();
            in.onResult(r -> seen.computeIfAbsent(r.taskId(), k -> new AtomicInteger()).incrementAndGet());
            List<TaskSpec> specs = new ArrayList<>();
            for (int i = 0; i < 400; i++) {
                specs.add(TaskSpec.of("sleep", "0.01"));
            }
            List<CompletableFuture<TaskResult>> fs = in.submit(specs);
            await().atMost(Duration.ofSeconds(60)).until(() -> seen.size() >= 50);
            // a restart: the executors keep dialling; the next dispatcher replays the journal
            first.stopForRestart();
            Dispatcher second = Dispatcher.start(cfg.withPort(port));
            try {
                CompletableFuture.allOf(fs.toArray(CompletableFuture<?>[]::new)).get(120, TimeUnit.SECONDS);
                assertThat(fs).allSatisfy(f -> assertThat(f.join().succeeded()).isTrue());
                assertThat(seen).hasSize(400);
                assertThat(seen.values()).allSatisfy(n -> assertThat(n.get()).as("results per task").isEqualTo(1));
                assertThat(exec.reconnects()).isGreaterThanOrEqualTo(1);
                // and it keeps working
                assertThat(in.submit(TaskSpec.of("true")).get(30, TimeUnit.SECONDS).succeeded()).isTrue();
                in.close();
            } finally {
                client.close();
                exec.close();
                second.close();
            }
        } finally {
            client.close();
        }
    }

    @Test
    void withoutAJournalARestartedDispatcherCannotTakeTheInstanceBackAndSaysSo() throws Exception {
        Dispatcher first = Dispatcher.start(DispatcherConfig.local().withToken(TOKEN));
        int port = first.port();
        try (FalkonClient client = FalkonClient.connect("127.0.0.1:" + port, ClientOptions.defaults().withToken(TOKEN));
             Instance in = client.createInstance("gone")) {
            CompletableFuture<TaskResult> f = in.submit(TaskSpec.of("true")); // no executor: stays queued
            first.stopForRestart();
            Dispatcher second = Dispatcher.start(DispatcherConfig.local().withToken(TOKEN).withPort(port));
            try {
                assertThatThrownBy(() -> f.get(60, TimeUnit.SECONDS)).hasCauseInstanceOf(FalkonException.class)
                        .cause().hasMessageContaining("could not be re-attached");
            } finally {
                second.close();
            }
        }
    }

    @Test
    void anotherClientReattachesByIdAndGetsWhatWasNotAcknowledged() throws Exception {
        try (Topology t = new Topology(1, 2)) {
            String key;
            try (RawPeer gone = new RawPeer(t.dispatcher.port())) {
                gone.send(Message.Hello.of(Protocol.ROLE_CLIENT,
                        t.dispatcher.token().value(), "raw"));
                gone.read();
                gone.send(new Message.CreateInstance(1, "lease", 300));
                Message.InstanceCreated made = (Message.InstanceCreated) gone.read();
                long id = made.instanceId();
                key = InstanceKey.format(id, made.secret());
                List<Message.SubmittedTask> tasks = new ArrayList<>();
                for (int i = 0; i < 5; i++) {
                    tasks.add(new Message.SubmittedTask(i, TaskSpecCodec.encode(
                            TaskSpec.of("echo", "task-" + i))));
                }
                gone.send(new Message.Submit(2, id, tasks));
                gone.read(); // SUBMITTED; then the client vanishes without acknowledging anything
            }
            try (FalkonClient client = t.client()) {
                List<String> outputs = new CopyOnWriteArrayList<>();
                Instance in = client.attach(key, r -> outputs.add(r.stdout().trim()));
                await().atMost(Duration.ofSeconds(30)).until(() -> outputs.size() == 5);
                assertThat(outputs).containsExactlyInAnyOrder("task-0", "task-1", "task-2", "task-3", "task-4");
                // new work continues the ids and runs
                TaskResult more = in.submit(TaskSpec.of("echo", "more")).get(30, TimeUnit.SECONDS);
                assertThat(more.taskId()).isEqualTo(5);
                assertThat(more.stdout()).isEqualTo("more\n");
                in.close();
            }
        }
    }
}
