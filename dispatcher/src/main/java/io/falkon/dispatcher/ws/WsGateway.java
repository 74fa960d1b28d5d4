package io.falkon.dispatcher.ws;

import io.falkon.dispatcher.core.Link;
import io.falkon.dispatcher.core.Scheduler;
import io.falkon.dispatcher.core.SchedulerLoop;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpecCodec;
import io.falkon.protocol.soap.SoapXml;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The bridge between the SOAP operations and the scheduler. To the scheduler, the whole Web
 * Services interface is one client connection ({@link #link}) that owns every instance created over
 * WS; the instance key (the random 64-bit id, in hex) is what a WS caller must present, so an
 * instance is as private as its key, and TCP clients and WS callers cannot touch each other's
 * instances. Results the scheduler delivers wait here, per instance, until {@code GetResults}
 * takes them (long-poll). Leases are enforced here: an instance not called for its lease is
 * destroyed and its unfinished tasks cancelled.
 *
 * <p>Called from the HTTP worker threads; the scheduler is only ever reached through its loop.
 */
final class WsGateway implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WsGateway.class);
    private static final long REPLY_TIMEOUT_SECONDS = 60;

    /** An instance created over WS, with the results that wait to be fetched. */
    private static final class Session {
        final long id;
        final long leaseNanos;
        final ArrayDeque<Message.DeliveredResult> results = new ArrayDeque<>();
        long nextAutoId;
        long outstanding;
        long lastUseNanos;
        int activeCalls;
        String goneReason;

        Session(long id, long leaseSeconds, long now) {
            this.id = id;
            this.leaseNanos = TimeUnit.SECONDS.toNanos(leaseSeconds);
            this.lastUseNanos = now;
        }
    }

    private final SchedulerLoop loop;
    private final Scheduler scheduler;
    private final WsTransport.Settings settings;
    private final GatewayLink link = new GatewayLink();
    private final Map<Long, CompletableFuture<Message>> pending = new ConcurrentHashMap<>();
    private final Map<Long, Session> sessions = new ConcurrentHashMap<>();
    private final AtomicLong requests = new AtomicLong();
    private final ScheduledExecutorService sweeper;
    private final Object pauseLock = new Object();
    private volatile boolean paused;
    private volatile boolean closed;

    WsGateway(SchedulerLoop loop, WsTransport.Settings settings) {
        this.loop = loop;
        this.scheduler = loop.scheduler();
        this.settings = settings;
        this.sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "falkon-ws-leases");
            t.setDaemon(true);
            return t;
        });
        sweeper.scheduleWithFixedDelay(this::expireLeases, 250, 250, TimeUnit.MILLISECONDS);
    }

    WsTransport.Settings settings() {
        return settings;
    }

    // ---- operations ------------------------------------------------------------------------

    /** CreateInstance; returns the new instance's id and its lease. */
    long[] createInstance(String clientName, long leaseSeconds) {
        if (leaseSeconds < 0) {
            throw WsFault.client("leaseSeconds must not be negative, got " + leaseSeconds);
        }
        long lease = leaseSeconds == 0 ? settings.defaultLeaseSeconds() : leaseSeconds;
        if (lease > settings.maxLeaseSeconds()) {
            throw WsFault.client("leaseSeconds " + lease + " is over this service's maximum of "
                    + settings.maxLeaseSeconds());
        }
        long requestId = requests.incrementAndGet();
        // lease 0 to the scheduler: it neither journals nor retains results; the lease is kept here
        Message.CreateInstance req = new Message.CreateInstance(requestId, clientName, 0);
        Message reply = call(requestId, () -> scheduler.createInstance(link, req));
        long id = ((Message.InstanceCreated) reply).instanceId();
        sessions.put(id, new Session(id, lease, System.nanoTime()));
        log.debug("instance {} created over WS for '{}', lease {} s", key(id), clientName, lease);
        return new long[]{id, lease};
    }

    /** Submit; returns the ids of the accepted tasks, in order. */
    long[] submit(long instanceId, List<SoapXml.ParsedTask> tasks) {
        if (tasks.isEmpty()) {
            throw WsFault.client("Submit has no <task>");
        }
        Session s = use(instanceId);
        try {
            awaitResumed();
            long[] ids = new long[tasks.size()];
            List<Message.SubmittedTask> bundle = new ArrayList<>(tasks.size());
            TaskSpecCodec.Scan[] scans = new TaskSpecCodec.Scan[tasks.size()];
            synchronized (s) {
                for (int i = 0; i < ids.length; i++) {
                    Long given = tasks.get(i).id();
                    ids[i] = given != null ? given : s.nextAutoId;
                    s.nextAutoId = Math.max(s.nextAutoId, ids[i] + 1);
                }
                s.outstanding += ids.length; // before the results can arrive
            }
            for (int i = 0; i < ids.length; i++) {
                byte[] spec = TaskSpecCodec.encode(tasks.get(i).spec());
                scans[i] = TaskSpecCodec.scan(spec);
                if (!scans[i].valid()) {
                    unaccept(s, ids.length);
                    throw WsFault.client("task " + i + " of the bundle (id " + ids[i] + "): " + scans[i].problem()
                            + "; nothing of this bundle was queued");
                }
                bundle.add(new Message.SubmittedTask(ids[i], spec));
            }
            long requestId = requests.incrementAndGet();
            Message.Submit req = new Message.Submit(requestId, instanceId, bundle);
            try {
                call(requestId, () -> scheduler.submit(link, req, scans));
            } catch (WsFault e) {
                unaccept(s, ids.length);
                throw e;
            }
            return ids;
        } finally {
            release(s);
        }
    }

    private static void unaccept(Session s, int n) {
        synchronized (s) {
            s.outstanding -= n;
        }
    }

    /** What GetResults returns: the results taken and how many tasks have no result yet. */
    record Fetched(List<Message.DeliveredResult> results, long outstanding) {
    }

    /** GetResults: up to {@code max} results, waiting up to {@code waitSeconds} for the first one. */
    Fetched results(long instanceId, int max, int waitSeconds) {
        if (max < 1) {
            throw WsFault.client("max must be at least 1, got " + max);
        }
        if (waitSeconds < 0) {
            throw WsFault.client("waitSeconds must not be negative, got " + waitSeconds);
        }
        int take = Math.min(max, settings.maxResults());
        long waitNanos = TimeUnit.SECONDS.toNanos(Math.min(waitSeconds, settings.maxWaitSeconds()));
        Session s = use(instanceId);
        try {
            synchronized (s) {
                long deadline = System.nanoTime() + waitNanos;
                while (s.results.isEmpty() && s.goneReason == null && s.outstanding > 0 && !closed) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    try {
                        TimeUnit.NANOSECONDS.timedWait(s, left);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw WsFault.server("interrupted while waiting for results");
                    }
                }
                if (s.results.isEmpty() && s.goneReason != null) {
                    throw WsFault.client("instance " + key(instanceId) + " is gone: " + s.goneReason);
                }
                int n = Math.min(take, s.results.size());
                List<Message.DeliveredResult> out = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    out.add(s.results.pollFirst());
                }
                return new Fetched(out, s.outstanding + s.results.size());
            }
        } finally {
            release(s);
        }
    }

    /** GetStatus: the scheduler's status document; for an instance also its unfetched results and lease. */
    record Status(String json, long unfetched, long leaseSeconds) {
    }

    /** Status of one instance (id != 0) or of the dispatcher (0); unfetched is -1 for the dispatcher. */
    Status status(long instanceId) {
        Session s = instanceId == 0 ? null : use(instanceId);
        try {
            long requestId = requests.incrementAndGet();
            Message.StatusRequest req = new Message.StatusRequest(requestId, instanceId);
            String json = ((Message.Status) call(requestId, () -> scheduler.status(link, req))).json();
            long unfetched = -1;
            if (s != null) {
                synchronized (s) {
                    unfetched = s.results.size();
                }
            }
            return new Status(json, unfetched, s == null ? 0 : TimeUnit.NANOSECONDS.toSeconds(s.leaseNanos));
        } finally {
            if (s != null) {
                release(s);
            }
        }
    }

    /** Destroy; returns the number of unfinished tasks cancelled. */
    int destroy(long instanceId) {
        Session s = use(instanceId);
        release(s);
        int cancelled = destroyOnScheduler(s, "destroyed by a Destroy call");
        return cancelled;
    }

    private int destroyOnScheduler(Session s, String reason) {
        if (sessions.remove(s.id, s)) {
            synchronized (s) {
                s.goneReason = reason;
                s.results.clear();
                s.notifyAll();
            }
        }
        long requestId = requests.incrementAndGet();
        Message.Destroy req = new Message.Destroy(requestId, s.id);
        return ((Message.Destroyed) call(requestId, () -> scheduler.destroy(link, req))).cancelled();
    }

    private void expireLeases() {
        long now = System.nanoTime();
        for (Session s : sessions.values()) {
            boolean expired;
            synchronized (s) {
                expired = s.activeCalls == 0 && now - s.lastUseNanos >= s.leaseNanos;
            }
            if (expired) {
                try {
                    int n = destroyOnScheduler(s, "its lease of " + TimeUnit.NANOSECONDS.toSeconds(s.leaseNanos)
                            + " s ran out");
                    log.info("WS instance {} destroyed: no call for its lease of {} s ({} tasks cancelled)", key(s.id),
                            TimeUnit.NANOSECONDS.toSeconds(s.leaseNanos), n);
                } catch (WsFault e) {
                    log.debug("expiring WS instance {}: {}", key(s.id), e.getMessage());
                }
            }
        }
    }

    /** The session of a key a caller presented; renews its lease and marks a call in progress. */
    private Session use(long instanceId) {
        Session s = sessions.get(instanceId);
        if (s == null) {
            throw WsFault.client("unknown instance " + key(instanceId)
                    + " (never created over WS, destroyed, or its lease ran out)");
        }
        synchronized (s) {
            if (s.goneReason != null) {
                throw WsFault.client("instance " + key(instanceId) + " is gone: " + s.goneReason);
            }
            s.activeCalls++;
            s.lastUseNanos = System.nanoTime();
        }
        return s;
    }

    private static void release(Session s) {
        synchronized (s) {
            s.activeCalls--;
            s.lastUseNanos = System.nanoTime();
        }
    }

    /** Backpressure: while the scheduler is over its memory budget, submissions wait (up to a limit). */
    private void awaitResumed() {
        if (!paused) {
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(REPLY_TIMEOUT_SECONDS);
        synchronized (pauseLock) {
            while (paused && !closed) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw WsFault.server("the dispatcher is over its memory budget and accepts no tasks now; "
                            + "retry later");
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(pauseLock, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw WsFault.server("interrupted");
                }
            }
        }
    }

    /** Runs {@code event} on the scheduler loop and waits for the reply to {@code requestId}. */
    private Message call(long requestId, Runnable event) {
        if (closed) {
            throw WsFault.server("the dispatcher is shutting down");
        }
        CompletableFuture<Message> reply = new CompletableFuture<>();
        pending.put(requestId, reply);
        loop.execute(event);
        Message m;
        try {
            m = reply.get(REPLY_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw WsFault.server("interrupted while waiting for the scheduler");
        } catch (ExecutionException e) {
            throw WsFault.server(e.getCause().getMessage());
        } catch (TimeoutException e) {
            throw WsFault.server("the scheduler did not answer within " + REPLY_TIMEOUT_SECONDS + " s");
        } finally {
            pending.remove(requestId);
        }
        if (m instanceof Message.ErrorMessage err) {
            ErrorCode code = ErrorCode.of(err.code());
            throw code == ErrorCode.SHUTTING_DOWN ? WsFault.server(err.message()) : WsFault.client(err.message());
        }
        return m;
    }

    /** What the scheduler sent this link during one batch. */
    private void receive(List<Message> messages) {
        for (int i = 0, n = messages.size(); i < n; i++) {
            Message m = messages.get(i);
            if (m instanceof Message.Deliver d) {
                Session s = sessions.get(d.instanceId());
                if (s == null) {
                    continue; // destroyed meanwhile: nobody can fetch these any more
                }
                synchronized (s) {
                    if (s.goneReason == null) {
                        s.results.addAll(d.results());
                        s.outstanding -= d.results().size();
                        s.notifyAll();
                    }
                }
            } else {
                CompletableFuture<Message> f = pending.get(requestIdOf(m));
                if (f != null) {
                    f.complete(m);
                } else {
                    log.debug("WS gateway: no caller waits for {}", m.type());
                }
            }
        }
    }

    private static long requestIdOf(Message m) {
        if (m instanceof Message.InstanceCreated c) {
            return c.requestId();
        } else if (m instanceof Message.Submitted s) {
            return s.requestId();
        } else if (m instanceof Message.Destroyed d) {
            return d.requestId();
        } else if (m instanceof Message.Status s) {
            return s.requestId();
        } else if (m instanceof Message.ErrorMessage e) {
            return e.requestId();
        }
        return -1;
    }

    static String key(long id) {
        return Long.toUnsignedString(id, 16);
    }

    /** Parses an instance key as CreateInstance returned it. */
    static long parseKey(String key) {
        String k = key == null ? "" : key.trim();
        if (k.isEmpty() || k.length() > 16) {
            throw WsFault.client("'" + k + "' is not an instance key (up to 16 hex digits, as CreateInstance returned)");
        }
        try {
            return Long.parseUnsignedLong(k, 16);
        } catch (NumberFormatException e) {
            throw WsFault.client("'" + k + "' is not an instance key (up to 16 hex digits, as CreateInstance returned)");
        }
    }

    /** Destroys every WS instance (as a disconnecting client) and fails the calls in progress. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        sweeper.shutdownNow();
        loop.execute(() -> scheduler.clientDisconnected(link));
        failAll("the dispatcher is shutting down");
    }

    private void failAll(String reason) {
        for (CompletableFuture<Message> f : pending.values()) {
            f.completeExceptionally(new IllegalStateException(reason));
        }
        for (Session s : sessions.values()) {
            synchronized (s) {
                s.goneReason = reason;
                s.notifyAll();
            }
        }
        synchronized (pauseLock) {
            pauseLock.notifyAll();
        }
    }

    /** The gateway as the scheduler sees it: one client connection. */
    private final class GatewayLink implements Link {
        private List<Message> buffered = new ArrayList<>();

        @Override
        public boolean enqueue(Message message) {
            buffered.add(message);
            return buffered.size() == 1;
        }

        @Override
        public Runnable takeFlush() {
            if (buffered.isEmpty()) {
                return null;
            }
            List<Message> out = buffered;
            buffered = new ArrayList<>();
            return () -> receive(out);
        }

        @Override
        public void close(Message.ErrorMessage error) {
            List<Message> out = buffered;
            buffered = new ArrayList<>();
            receive(out);
            failAll(error == null ? "the dispatcher closed the WS interface" : error.message());
        }

        @Override
        public void setReading(boolean reading) {
            paused = !reading;
            if (reading) {
                synchronized (pauseLock) {
                    pauseLock.notifyAll();
                }
            }
        }

        @Override
        public String remote() {
            return "ws";
        }

        @Override
        public String remoteHost() {
            return "127.0.0.1";
        }

        @Override
        public String toString() {
            return "WS interface";
        }
    }
}
