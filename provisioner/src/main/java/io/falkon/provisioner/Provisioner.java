package io.falkon.provisioner;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.auth.TokenSource;
import io.falkon.protocol.time.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Multi-level scheduling's first level: watches a dispatcher (queue, executors) and grows and
 * shrinks its executor pool through a batch scheduler. Every poll interval it reads the
 * dispatcher's status document and the scheduler's job states, lets the {@link Planner} decide,
 * and submits or cancels jobs through the {@link LrmAdapter}. Allocations and their stages are in
 * {@link #statusJson()}.
 */
public final class Provisioner implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Provisioner.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * How to provision.
     *
     * @param executorCommand the command that starts one executor pointed at the dispatcher (the
     *                        provisioner adds {@code --slots}, {@code --idle-exit}, {@code --id} and
     *                        {@code --token-file})
     * @param name            prefix of job names and executor ids
     * @param token           the dispatcher's token, which the executors present: written to a file in
     *                        {@code workDir} that only this user can read, and named on their command
     *                        line by path ({@code ps} shows the path, never the token)
     */
    public record Config(Planner.Bounds bounds, AcquisitionPolicy acquisition, ReleasePolicy release,
                         List<String> executorCommand, Duration pollInterval, Path workDir, String name, Token token,
                         Tiered tiered) {
        public Config(Planner.Bounds bounds, AcquisitionPolicy acquisition, ReleasePolicy release,
                      List<String> executorCommand, Duration pollInterval, Path workDir, String name, Token token) {
            this(bounds, acquisition, release, executorCommand, pollInterval, workDir, name, token, null);
        }

        /** The same, laid out the Blue Gene/P way. */
        public Config withTiered(Tiered t) {
            return new Config(bounds, acquisition, release, executorCommand, pollInterval, workDir, name, token, t);
        }

        public Config {
            Objects.requireNonNull(token, "token");
            Objects.requireNonNull(bounds, "bounds");
            Objects.requireNonNull(acquisition, "acquisition");
            Objects.requireNonNull(release, "release");
            executorCommand = List.copyOf(executorCommand);
            Objects.requireNonNull(workDir, "workDir");
            if (pollInterval.toMillis() < 10) {
                throw new IllegalArgumentException("poll interval must be at least 10 ms");
            }
        }
    }

    /**
     * The tiered layout of Falkon on Blue Gene/P (seed 000, §4.2): each allocation runs its own
     * dispatcher on one node and executors on the others, pointed at it (nodes meet through a
     * {@link Rendezvous} in the work directory); the provisioner keeps {@code dispatchersFile}
     * listing the dispatchers of its active allocations, which clients follow.
     *
     * @param nodeCommand how a node starts {@code falkon node} (program and arguments); the
     *                    provisioner adds the allocation, its size, the rendezvous directory, the token
     *                    file and, after {@code --}, the executor command
     */
    public record Tiered(List<String> nodeCommand, Path dispatchersFile) {
        public Tiered {
            nodeCommand = List.copyOf(nodeCommand);
            Objects.requireNonNull(dispatchersFile, "dispatchersFile");
        }
    }

    private final Config config;
    private final LrmAdapter lrm;
    private final Supplier<String> dispatcherStatus;
    private final Planner planner;
    private final Thread thread;
    private final Clock clock;
    private final long startedMillis;
    private volatile boolean stopping;
    private volatile String lastError = "";
    private volatile String status = "{}";
    private int sequence;
    private List<String> listed;
    private final Set<String> cleared = new HashSet<>();

    private Provisioner(Config config, LrmAdapter lrm, Supplier<String> dispatcherStatus, Clock clock) {
        this.config = config;
        this.clock = clock;
        this.startedMillis = monotonicMillis();
        this.lrm = lrm;
        this.dispatcherStatus = dispatcherStatus;
        this.planner = new Planner(config.bounds(), config.acquisition(), config.release(), config.tiered() != null);
        this.thread = new Thread(this::loop, "falkon-provisioner");
        thread.setDaemon(true);
    }

    /** Starts provisioning for the dispatcher whose status document {@code dispatcherStatus} returns. */
    public static Provisioner start(Config config, LrmAdapter lrm, Supplier<String> dispatcherStatus) {
        return start(config, lrm, dispatcherStatus, Clock.SYSTEM);
    }

    /**
     * As {@link #start(Config, LrmAdapter, Supplier)}, with the clock the planner's intervals (idle
     * times, stage times) are measured on: its monotonic tick, so that a step of the wall clock
     * neither releases every allocation at once nor keeps idle ones forever; tests pass a fake one.
     */
    static Provisioner start(Config config, LrmAdapter lrm, Supplier<String> dispatcherStatus, Clock clock) {
        Provisioner p = new Provisioner(config, lrm, dispatcherStatus, clock);
        p.thread.start();
        log.info("provisioner started: {} via {}, {} acquisition, {} release", config.name(), lrm.name(),
                config.acquisition().name(), describe(config.release()));
        return p;
    }

    private long monotonicMillis() {
        return clock.tickMicros() / 1000;
    }

    private static String describe(ReleasePolicy r) {
        if (r.never()) {
            return "no";
        }
        return (r.centralized() ? "centralized (queue below " + r.queueBelow() + " for " : "distributed (idle ")
                + r.idle().toMillis() / 1000.0 + " s)";
    }

    private void loop() {
        while (!stopping) {
            try {
                step();
                lastError = "";
            } catch (IOException | RuntimeException e) {
                lastError = e.getMessage() == null ? e.toString() : e.getMessage();
                log.warn("provisioner: {}", lastError);
            }
            status = render();
            try {
                Thread.sleep(config.pollInterval().toMillis()); // a poll period, not a synchronisation
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private synchronized void step() throws IOException {
        JsonNode st = JSON.readTree(dispatcherStatus.get());
        Map<String, Integer> registered = new HashMap<>();
        Map<String, Integer> busy = new HashMap<>();
        List<JsonNode> executorLists = new ArrayList<>(List.of(st.path("executorList")));
        for (JsonNode d : st.path("dispatcherList")) { // several dispatchers: each one's executors
            executorLists.add(d.path("status").path("executorList"));
        }
        for (JsonNode list : executorLists) {
            for (JsonNode e : list) {
                String alloc = allocationOf(e.path("id").asText());
                if (alloc != null) {
                    registered.merge(alloc, 1, Integer::sum);
                    if (e.path("running").asInt() > 0) {
                        busy.merge(alloc, 1, Integer::sum);
                    }
                }
            }
        }
        Map<String, JobState> jobs = lrm.states(planner.activeJobIds());
        long now = monotonicMillis();
        long queued = st.path("queued").asLong();
        long running = st.path("running").asLong();
        JsonNode res = st.path("resources"); // absent from older dispatchers: a core per task, no memory
        int advertising = 0;
        for (JsonNode list : executorLists) {
            for (JsonNode e : list) {
                advertising += e.has("memoryMiB") ? 1 : 0;
            }
        }
        Planner.Need need = new Planner.Need(res.path("queuedCores").asLong(queued),
                res.path("runningCores").asLong(running),
                res.path("queuedMemoryMiB").asLong(0) + res.path("runningMemoryMiB").asLong(0),
                st.path("executors").path("memoryMiB").asLong(0), advertising,
                res.path("queuedGpus").asLong(0) + res.path("runningGpus").asLong(0),
                st.path("executors").path("gpus").asLong(0));
        Planner.Decision d = planner.decide(new Planner.Observation(now, queued, running,
                st.path("executors").path("slots").asLong(), registered, busy, jobs, need));
        for (Allocation a : d.cancel()) {
            log.info("provisioner: releasing {} (job {}): its executors are idle and the queue is short", a.name(),
                    a.jobId());
            lrm.cancel(a.jobId());
        }
        if (d.requestNodes() > 0 && !stopping) {
            String name = config.name() + "-a" + (++sequence);
            JobRequest req = new JobRequest(name, d.requestNodes(), config.bounds().slotsPerNode(),
                    Duration.ofSeconds(Math.max(60, config.bounds().allocationSeconds())),
                    nodeCommand(name, d.requestNodes()), config.workDir(), d.gpusPerNode());
            String id = lrm.submit(req);
            planner.requested(name, d.requestNodes(), id, now);
            log.info("provisioner: requested {} node(s) as {} (job {}){}", d.requestNodes(), name, id,
                    d.gpusPerNode() > 0 ? " with " + d.gpusPerNode() + " GPU(s) each" : "");
        }
        if (config.tiered() != null) {
            listDispatchers();
        }
    }

    /** What each node of allocation {@code name} runs: an executor, or in the tiered layout {@code falkon node}. */
    private List<String> nodeCommand(String name, int nodes) throws IOException {
        if (config.tiered() == null) {
            return executorCommand();
        }
        List<String> cmd = new ArrayList<>(config.tiered().nodeCommand());
        cmd.addAll(List.of("--allocation", name, "--nodes", Integer.toString(nodes), "--rendezvous",
                config.workDir().toAbsolutePath().toString()));
        if (config.token().required()) {
            cmd.addAll(List.of("--token-file", tokenFile().toString()));
        } else {
            cmd.add("--no-auth");
        }
        cmd.add("--");
        cmd.addAll(executorCommand());
        return cmd;
    }

    /**
     * Rewrites the dispatchers file with the dispatchers of the active allocations that have
     * published their address (only when that list changed), and clears the rendezvous of those that
     * ended (a scheduler may SIGKILL a node, which then cannot withdraw its address itself).
     */
    private void listDispatchers() throws IOException {
        List<String> addresses = new ArrayList<>();
        for (Allocation a : planner.allocations()) {
            Rendezvous rz = new Rendezvous(config.workDir(), a.name());
            if (a.active() && !a.cancelRequested()) {
                rz.address().ifPresent(addresses::add);
            } else if (!a.active() && cleared.add(a.name())) {
                rz.withdraw();
            }
        }
        writeDispatchers(addresses);
    }

    private void writeDispatchers(List<String> addresses) throws IOException {
        if (!addresses.equals(listed)) {
            Path file = config.tiered().dispatchersFile().toAbsolutePath();
            Files.createDirectories(file.getParent());
            Rendezvous.writeAtomically(file, addresses);
            listed = List.copyOf(addresses);
            log.info("provisioner: dispatchers now {}", addresses);
        }
    }

    private List<String> executorCommand() throws IOException {
        List<String> cmd = new ArrayList<>(config.executorCommand());
        if (config.token().required()) {
            cmd.add("--token-file");
            cmd.add(tokenFile().toString());
        }
        cmd.add("--slots");
        cmd.add(Integer.toString(config.bounds().slotsPerNode()));
        if (!config.release().centralized() && !config.release().never()) {
            cmd.add("--idle-exit");
            cmd.add(Double.toString(config.release().idle().toMillis() / 1000.0));
        }
        return cmd;
    }

    /** The token for the executors, in a file of the work directory only this user can read. */
    private Path tokenFile() throws IOException {
        Path f = config.workDir().toAbsolutePath().resolve(config.name() + ".token");
        if (!Files.exists(f)) {
            Files.createDirectories(f.getParent());
            TokenSource.write(f, config.token());
        }
        return f;
    }

    /** The allocation an executor id names ({@code NAME-aN-HOST-PID}), or null for executors not ours. */
    private String allocationOf(String executorId) {
        String prefix = config.name() + "-a";
        if (!executorId.startsWith(prefix)) {
            return null;
        }
        int end = executorId.indexOf('-', prefix.length());
        return end < 0 ? null : executorId.substring(0, end);
    }

    /**
     * The allocations so far with their stages and times, and the provisioner's settings (JSON), as
     * of the last poll; answers at once.
     */
    public String statusJson() {
        return status;
    }

    private synchronized String render() {
        ObjectNode o = JSON.createObjectNode();
        o.put("lrm", lrm.name());
        o.put("acquisition", config.acquisition().name());
        o.put("release", describe(config.release()));
        o.put("lastError", lastError);
        o.put("activeNodes", planner.allocations().stream().filter(Allocation::active).mapToInt(Allocation::nodes).sum());
        ArrayNode list = o.putArray("allocations");
        for (Allocation a : planner.allocations()) {
            ObjectNode n = list.addObject();
            n.put("name", a.name());
            n.put("jobId", a.jobId());
            n.put("nodes", a.nodes());
            n.put("stage", a.stage().name().toLowerCase(Locale.ROOT));
            n.put("registered", a.registered());
            ObjectNode at = n.putObject("secondsAfterStart");
            for (Allocation.Stage s : Allocation.Stage.values()) {
                if (a.at(s) >= 0) {
                    at.put(s.name().toLowerCase(Locale.ROOT), (a.at(s) - startedMillis) / 1000.0);
                }
            }
        }
        return o.toString();
    }

    /** The allocations so far (a snapshot, for reports). */
    public synchronized List<Allocation> allocations() {
        return List.copyOf(planner.allocations());
    }

    /** Stops deciding and cancels every allocation still active. */
    @Override
    public void close() {
        stopping = true;
        thread.interrupt();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (this) {
            if (config.tiered() != null) {
                try {
                    writeDispatchers(List.of()); // clients send nothing more to what is being cancelled
                } catch (IOException e) {
                    log.warn("provisioner: cannot empty the dispatchers file: {}", e.getMessage());
                }
            }
            status = render();
            for (String id : planner.activeJobIds()) {
                try {
                    lrm.cancel(id);
                } catch (IOException e) {
                    log.warn("provisioner: cannot cancel job {}: {}", id, e.getMessage());
                }
            }
            if (config.tiered() != null) {
                for (Allocation a : planner.allocations()) {
                    try {
                        new Rendezvous(config.workDir(), a.name()).withdraw(); // cancelled: nobody to reach
                    } catch (IOException e) {
                        log.warn("provisioner: cannot clear {}'s rendezvous: {}", a.name(), e.getMessage());
                    }
                }
            }
        }
    }
}
