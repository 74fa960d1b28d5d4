package io.falkon.provisioner;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import io.falkon.protocol.auth.TokenSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What every {@link LrmAdapter} must do, against a real dispatcher and real executor processes:
 * a job starts one executor per node that registers under the job's name; the job's state follows
 * it; cancelling ends it and its executors; a job whose executors leave by themselves ends.
 */
abstract class LrmAdapterContract {
    private static final AtomicInteger JOBS = new AtomicInteger();
    static Dispatcher dispatcher;

    @TempDir
    Path work;

    abstract LrmAdapter adapter();

    /** Nodes a test job asks for (what the scheduler under test has). */
    int nodes() {
        return 2;
    }

    /** The dispatcher's token, in a file only this user reads: what the job scripts point the executors at. */
    static Path tokenFile;

    @BeforeAll
    static void startDispatcher() throws Exception {
        dispatcher = Dispatcher.start(DispatcherConfig.local());
        Path dir = Files.createTempDirectory("falkon-lrm-test");
        tokenFile = dir.resolve("token");
        TokenSource.write(tokenFile, dispatcher.token());
    }

    @AfterAll
    static void stopDispatcher() throws Exception {
        dispatcher.close();
        Files.deleteIfExists(tokenFile);
        Files.deleteIfExists(tokenFile.getParent());
    }

    /**
     * The Java executor (from the executor-java module's build) pointed at a dispatcher on this
     * machine, its spool in {@code tmp}: a job's environment is the scheduler's (SGE passes none of
     * the test's), and an executor the scheduler kills leaves its spool with the test's directory.
     */
    static List<String> executorCommand(int dispatcherPort, Path tmp) {
        Path jar = Path.of("../executor-java/target/falkon-executor.jar").toAbsolutePath().normalize();
        assertThat(jar).as("the executor jar (built by the executor-java module)").exists();
        return List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-XX:TieredStopAtLevel=1",
                "-Xmx64m", "-Djava.io.tmpdir=" + tmp, "-jar", jar.toString(), "--dispatcher", "127.0.0.1:" + dispatcherPort);
    }

    JobRequest request(List<String> extra) {
        List<String> cmd = new ArrayList<>(executorCommand(dispatcher.port(), work));
        cmd.addAll(List.of("--token-file", tokenFile.toString()));
        cmd.addAll(extra);
        return new JobRequest("ct" + JOBS.incrementAndGet() + "-" + adapter().name(), nodes(), 1,
                Duration.ofMinutes(5), cmd, work);
    }

    static List<String> executorsNamed(String prefix) throws Exception {
        JsonNode st = new ObjectMapper().readTree(dispatcher.status());
        List<String> ids = new ArrayList<>();
        for (JsonNode e : st.path("executorList")) {
            if (e.path("id").asText().startsWith(prefix + "-")) {
                ids.add(e.path("id").asText());
            }
        }
        return ids;
    }

    JobState state(String id) throws Exception {
        return adapter().states(List.of(id)).get(id);
    }

    @Test
    void aJobStartsOneExecutorPerNodeAndCancellingItEndsThem() throws Exception {
        JobRequest req = request(List.of());
        String id = adapter().submit(req);
        assertThat(id).isNotBlank();
        await().atMost(Duration.ofSeconds(90)).until(() -> executorsNamed(req.name()).size() == nodes());
        assertThat(state(id)).isEqualTo(JobState.RUNNING);
        adapter().cancel(id);
        await().atMost(Duration.ofSeconds(60)).until(() -> state(id) == JobState.DONE);
        await().atMost(Duration.ofSeconds(60)).until(() -> executorsNamed(req.name()).isEmpty());
    }

    @Test
    void aJobWhoseExecutorsLeaveWhenIdleEndsByItself() throws Exception {
        JobRequest req = request(List.of("--idle-exit", "1"));
        String id = adapter().submit(req);
        await().atMost(Duration.ofSeconds(90)).until(() -> state(id) == JobState.DONE);
        assertThat(executorsNamed(req.name())).isEmpty();
        assertThat(Files.list(work).count()).as("the job's files are in its work directory").isPositive();
        try (var here = Files.list(Path.of(""))) {
            assertThat(here.map(p -> p.getFileName().toString()))
                    .as("nothing of the job is left in the submitting process's directory")
                    .noneMatch(n -> n.startsWith(req.name()));
        }
    }

    @Test
    void theScriptRunsTheExecutorCommandUnderTheJobsName() {
        JobRequest req = request(List.of());
        String script = adapter().script(req);
        assertThat(script).startsWith("#!").contains("falkon-executor.jar").contains(req.name() + "-");
    }

    @Test
    void aJobTheSchedulerDoesNotKnowIsDoneAndCancellingItIsNoError() throws Exception {
        assertThat(state("999999")).isEqualTo(JobState.DONE);
        adapter().cancel("999999");
    }
}
