package io.falkon.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A client of several dispatchers at once: the 3-tier Falkon of Blue Gene/P (seed 000, §4.2–4.3.1),
 * where each dispatcher manages its own executors and the client spreads the work. A
 * {@link DistributedInstance} holds one instance on every dispatcher and sends each of them no more
 * than its executors can start soon, so that no dispatcher's executors wait while another holds
 * queued tasks of this client; results from all of them arrive as one stream.
 *
 * <p>Dispatchers come from a list ({@code "h1:p1,h2:p2"}), from {@link #addDispatcher}, or from a
 * file ({@link #watch}, one address per line, kept up to date by the provisioner); the client learns
 * about them as they appear (an unreachable one is dialled again every few seconds) and stops sending
 * to one that leaves. A dispatcher that has not answered for {@link ClientOptions#failoverAfter()}
 * (killed, hung or cut off) is taken as lost: its unfinished tasks go to the others at once
 * (failover, see {@link DistributedInstance}); if it comes back (restarted from its journal) it
 * cancels those that moved and gets new tasks again. Each task's result is delivered once.
 *
 * <p>Every half second it asks every dispatcher for its status, without waiting for the answer: the
 * answer gives its capacity (its executors' slots) and says it is alive. Thread-safe.
 */
public final class DistributedClient implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DistributedClient.class);
    /**
     * Made on first use, not when the class is: every client command asks {@link #isDistributed}
     * first, and an ObjectMapper costs a short command tens of milliseconds it may not need.
     */
    private static final class Json {
        static final ObjectMapper MAPPER = new ObjectMapper();
    }
    private static final long POLL_MILLIS = 500;
    /** {@link #status()} waits this long for each dispatcher's answer, then reports it unreachable. */
    private static final long STATUS_WAIT_MILLIS = 5_000;
    /** An address of this form names a dispatchers file to follow. */
    public static final String FILE_PREFIX = "file:";

    /** One dispatcher: its address, connection (null while unreachable) and the slots its executors have. */
    static final class Member {
        final String address;
        volatile FalkonClient client;
        volatile int slots;
        volatile boolean leaving;
        volatile String lastStatus = "{}";
        /** When it last answered a status request (System.nanoTime), or was connected. */
        volatile long heardNanos;
        /** A status request is out and unanswered: no second one is sent meanwhile. */
        volatile boolean asking;
        /** The status request out now (completes, either way, when it is answered or fails). */
        volatile CompletableFuture<?> answer = CompletableFuture.completedFuture(null);
        /** Taken as lost (failover): nothing is sent to it until it answers again. */
        volatile boolean lost;

        Member(String address) {
            this.address = address;
        }

        boolean usable() {
            FalkonClient c = client;
            return c != null && !leaving && !lost;
        }
    }

    private final ClientOptions options;
    private final Map<String, Member> members = new ConcurrentHashMap<>();
    private final List<DistributedInstance> instances = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService poller;
    private volatile Path watched;
    private volatile boolean closed;

    private DistributedClient(ClientOptions options) {
        this.options = options;
        this.poller = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "falkon-distributed");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Connects to every dispatcher of {@code addresses} (comma-separated {@code host:port}s), or
     * follows the dispatchers file {@code file:PATH} (see {@link #watch}; it may list none yet:
     * tasks wait in the client until a dispatcher with executors appears).
     *
     * @throws FalkonException if none of the listed dispatchers can be reached
     */
    public static DistributedClient connect(String addresses, ClientOptions options) {
        DistributedClient c = new DistributedClient(options);
        if (addresses.startsWith(FILE_PREFIX)) {
            c.watched = Path.of(addresses.substring(FILE_PREFIX.length()));
            c.refresh();
            c.poller.scheduleWithFixedDelay(c::refresh, POLL_MILLIS, POLL_MILLIS, TimeUnit.MILLISECONDS);
            return c;
        }
        for (String a : split(addresses)) {
            c.members.putIfAbsent(a, new Member(a));
        }
        if (c.members.isEmpty()) {
            throw new IllegalArgumentException("no dispatcher address in '" + addresses + "'");
        }
        c.refresh();
        c.awaitFirstAnswers();
        if (c.members.values().stream().noneMatch(Member::usable)) {
            c.close();
            throw new FalkonException(null, "none of the dispatchers " + c.members.keySet() + " can be reached");
        }
        c.poller.scheduleWithFixedDelay(c::refresh, POLL_MILLIS, POLL_MILLIS, TimeUnit.MILLISECONDS);
        return c;
    }

    /** Gives the first status requests up to the connect timeout, so that capacity is known from the start. */
    private void awaitFirstAnswers() {
        try {
            CompletableFuture.allOf(members.values().stream().map(m -> m.answer).toArray(CompletableFuture[]::new))
                    .get(options.connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            // a dispatcher that does not answer in time gets tasks once it does
        }
    }

    /** Whether {@code address} names several dispatchers: a comma-separated list, or {@code file:PATH}. */
    public static boolean isDistributed(String address) {
        return address.indexOf(',') >= 0 || address.startsWith(FILE_PREFIX);
    }

    static List<String> split(String addresses) {
        Set<String> out = new LinkedHashSet<>();
        for (String a : addresses.split(",")) {
            if (!a.isBlank()) {
                out.add(a.strip());
            }
        }
        return new ArrayList<>(out);
    }

    /** Adds a dispatcher; tasks go to it as soon as it has executors. */
    public void addDispatcher(String address) {
        if (members.putIfAbsent(address.strip(), new Member(address.strip())) == null) {
            poller.execute(this::refresh);
        }
    }

    /** Sends nothing more to {@code address}; what it already runs finishes there. */
    public void removeDispatcher(String address) {
        Member m = members.get(address.strip());
        if (m != null) {
            m.leaving = true;
        }
    }

    /**
     * Follows the dispatchers listed in {@code file} (one {@code host:port} per line; blank lines and
     * {@code #} comments skipped), read again every half second: new ones are used, removed ones get
     * nothing more.
     */
    public void watch(Path file) {
        watched = file;
        poller.execute(this::refresh);
    }

    /** Creates an instance on every dispatcher, named {@code name}. */
    public DistributedInstance createInstance(String name) {
        DistributedInstance in = new DistributedInstance(this, name);
        instances.add(in);
        for (Member m : members.values()) {
            if (m.usable()) {
                in.join(m);
            }
        }
        in.pump();
        return in;
    }

    void forget(DistributedInstance in) {
        instances.remove(in);
    }

    ClientOptions options() {
        return options;
    }

    List<Member> members() {
        return new ArrayList<>(members.values());
    }

    /**
     * The status of every dispatcher and their sums:
     * {@code {"dispatchers": N, "queued", "running", "completed", "failed", "executors": {"registered",
     * "slots"}, "dispatcherList": [{"address", "reachable", "status": {…}}]}}.
     */
    public String status() {
        ObjectNode o = Json.MAPPER.createObjectNode();
        ArrayNode list = Json.MAPPER.createArrayNode();
        long queued = 0, running = 0, completed = 0, failed = 0, cancelled = 0, registered = 0, slots = 0;
        for (Member m : members.values()) {
            ObjectNode d = list.addObject();
            d.put("address", m.address);
            FalkonClient c = m.client;
            JsonNode st = null;
            if (c != null && !m.lost) { // a lost one may be hung: not waited for
                try {
                    st = Json.MAPPER.readTree(c.statusAsync().get(STATUS_WAIT_MILLIS, TimeUnit.MILLISECONDS));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    st = null;
                } catch (IOException | RuntimeException | java.util.concurrent.ExecutionException
                         | java.util.concurrent.TimeoutException e) {
                    st = null;
                }
            }
            d.put("reachable", st != null);
            if (st != null) {
                d.set("status", st);
                queued += st.path("queued").asLong();
                running += st.path("running").asLong();
                completed += st.path("completed").asLong();
                failed += st.path("failed").asLong();
                cancelled += st.path("cancelled").asLong();
                registered += st.path("executors").path("registered").asLong();
                slots += st.path("executors").path("slots").asLong();
            }
        }
        o.put("dispatchers", members.size());
        o.put("queued", queued);
        o.put("running", running);
        o.put("completed", completed);
        o.put("failed", failed);
        o.put("cancelled", cancelled);
        ObjectNode ex = o.putObject("executors");
        ex.put("registered", registered);
        ex.put("slots", slots);
        o.set("dispatcherList", list);
        return o.toString();
    }

    /** Once per poll: reads the watched file, dials unreachable dispatchers, reads every one's capacity. */
    private void refresh() {
        if (closed) {
            return;
        }
        Path file = watched;
        if (file != null) {
            try {
                List<String> listed = new ArrayList<>();
                // not written yet: lists none
                for (String line : Files.exists(file) ? Files.readAllLines(file) : List.<String>of()) {
                    String a = line.strip();
                    if (!a.isEmpty() && !a.startsWith("#")) {
                        listed.add(a);
                    }
                }
                for (String a : listed) {
                    members.putIfAbsent(a, new Member(a));
                    members.get(a).leaving = false;
                }
                for (Member m : members.values()) {
                    m.leaving = !listed.contains(m.address);
                }
            } catch (IOException e) {
                log.warn("cannot read the dispatchers file {}: {}", file, e.toString());
            }
        }
        for (Member m : members.values()) {
            if (m.client == null && !m.leaving) {
                try {
                    m.heardNanos = System.nanoTime();
                    m.client = FalkonClient.connect(m.address, options);
                    m.heardNanos = System.nanoTime();
                    log.info("dispatcher {} joined", m.address);
                } catch (FalkonException | IllegalArgumentException e) {
                    log.debug("dispatcher {} not reachable yet: {}", m.address, e.getMessage());
                    continue;
                }
            }
            FalkonClient c = m.client;
            if (c == null) {
                continue;
            }
            ask(m, c);
            Duration failoverAfter = options.failoverAfter();
            if (!m.lost && !failoverAfter.isZero() && System.nanoTime() - m.heardNanos > failoverAfter.toNanos()) {
                m.lost = true;
                m.slots = 0;
                log.warn("dispatcher {} has not answered for {} ms: its unfinished tasks go to the others",
                        m.address, failoverAfter.toMillis());
                for (DistributedInstance in : instances) {
                    in.failover(m);
                }
            }
            if (!m.lost) {
                for (DistributedInstance in : instances) {
                    in.join(m);
                }
            }
        }
        for (DistributedInstance in : instances) {
            in.pump();
        }
    }

    /**
     * Asks {@code m} for its status unless a request is out already; the answer (on its connection's
     * I/O thread) records its capacity and that it is alive. A lost one that answers is back: that is
     * handled on the poller's thread, which may wait for the dispatcher (never the I/O thread).
     */
    private void ask(Member m, FalkonClient c) {
        if (m.asking) {
            return;
        }
        m.asking = true;
        CompletableFuture<String> answer;
        try {
            answer = c.statusAsync();
        } catch (RuntimeException e) {
            m.asking = false;
            m.slots = 0;
            return;
        }
        m.answer = answer.handle((st, err) -> null);
        answer.whenComplete((st, err) -> {
            m.asking = false;
            if (err != null) {
                m.slots = 0; // unreachable now: nothing more goes there until it answers again
                return;
            }
            int before = m.slots;
            try {
                JsonNode s = Json.MAPPER.readTree(st);
                m.lastStatus = st;
                m.slots = Math.max(0, s.path("executors").path("slots").asInt() - suspendedSlots(s));
            } catch (IOException | RuntimeException e) {
                m.slots = 0;
                return;
            }
            m.heardNanos = System.nanoTime();
            if (m.slots > before && !m.lost) {
                for (DistributedInstance in : instances) {
                    in.pump(); // room appeared: waiting tasks need not wait for the next poll
                }
            }
            if (m.lost && !closed) {
                try {
                    poller.execute(() -> back(m));
                } catch (RuntimeException e) {
                    // closing
                }
            }
        });
    }

    /** On the poller's thread: a lost dispatcher answers again. */
    private void back(Member m) {
        if (!m.lost || closed) {
            return;
        }
        m.lost = false;
        log.info("dispatcher {} answers again: the tasks that moved away are cancelled there", m.address);
        for (DistributedInstance in : instances) {
            in.back(m);
        }
        for (DistributedInstance in : instances) {
            in.pump();
        }
    }

    private static int suspendedSlots(JsonNode status) {
        int n = 0;
        for (JsonNode e : status.path("executorList")) {
            if ("suspended".equals(e.path("state").asText())) {
                n += e.path("slots").asInt();
            }
        }
        return n;
    }

    @Override
    public void close() {
        closed = true;
        poller.shutdownNow();
        for (DistributedInstance in : new ArrayList<>(instances)) {
            in.close();
        }
        for (Member m : members.values()) {
            FalkonClient c = m.client;
            if (c != null) {
                c.close();
            }
        }
    }
}
