package io.falkon.transport.ws;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.dispatcher.admission.Admission;
import io.falkon.dispatcher.admission.Caller;
import io.falkon.dispatcher.admission.Role;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.LogSafe;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpecCodec;
import io.falkon.protocol.session.Requests;
import io.falkon.protocol.soap.SoapXml;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongFunction;

/**
 * The bridge between the SOAP operations and the scheduler. Every WS instance is a scheduler client
 * of its own ({@link WsLink}), owned through the admission stage like a TCP client's: the scheduler
 * keeps its results until they are acknowledged (counted in its memory budget), journals it, expires
 * its lease (idle time), and recognises a Submit sent again. Here, per instance, the results the
 * scheduler delivered wait for {@code GetResults}, and long-polls wait for them without holding a
 * thread. Every operation is asynchronous; its future completes on the WS worker pool.
 *
 * <p>An instance key is {@code ID-SECRET} (hex): the id alone takes nobody anywhere.
 */
final class WsGateway implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WsGateway.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** An instance key a caller presented. */
    record Key(long id, String secret) {
        @Override
        public String toString() {
            return LogSafe.instance(id); // never the secret
        }
    }

    /** A WS instance: its link to the scheduler and the results waiting to be fetched. */
    private static final class Session {
        final long id;
        final String secret;
        final WsLink link;
        final Caller caller;
        /** Completes when the scheduler confirmed the instance (created, or re-attached after a restart). */
        final CompletableFuture<Session> ready = new CompletableFuture<>();
        final ArrayDeque<Message.DeliveredResult> results = new ArrayDeque<>();
        final List<CompletableFuture<Void>> waiters = new ArrayList<>();
        long highestSeq;
        /** The highest seq handed to a caller: results up to it have been returned. */
        long returnedSeq;
        long nextAutoId;
        long leaseSeconds;
        String goneReason;

        Session(long id, String secret, WsLink link, Caller caller) {
            this.id = id;
            this.secret = secret;
            this.link = link;
            this.caller = caller;
        }
    }

    private final Admission admission;
    private final WsTransport.Settings settings;
    private final Executor completions;
    private final Requests requests = new Requests();
    private final Map<Long, Session> sessions = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * @param completions where the operations' futures complete (the WS worker pool: never the
     *                    thread that sends the scheduler's batches)
     */
    WsGateway(Admission admission, WsTransport.Settings settings, Executor completions) {
        this.admission = admission;
        this.settings = settings;
        this.completions = completions;
    }

    WsTransport.Settings settings() {
        return settings;
    }

    Admission admission() {
        return admission;
    }

    // ---- operations ------------------------------------------------------------------------

    /** What CreateInstance returns. */
    record Created(long id, String secret, long leaseSeconds) {
        String key() {
            return format(id, secret);
        }
    }

    CompletableFuture<Created> createInstance(Admission.Credential who, String from, String clientName,
                                              long leaseSeconds) {
        if (leaseSeconds < 0) {
            throw WsFault.client("CreateInstance: <leaseSeconds> must not be negative, got " + leaseSeconds);
        }
        long lease = leaseSeconds == 0 ? settings.defaultLeaseSeconds() : leaseSeconds;
        if (lease > settings.maxLeaseSeconds()) {
            throw WsFault.client("CreateInstance: <leaseSeconds> " + lease + " is over this service's maximum of "
                    + settings.maxLeaseSeconds());
        }
        WsLink link = new WsLink("ws " + from, this::receive, () -> { });
        Caller caller = admission.caller(who, link, "ws", Role.CLIENT);
        return call(caller, id -> new Message.CreateInstance(id, clientName, lease)).thenApply(m -> {
            Message.InstanceCreated c = (Message.InstanceCreated) m;
            Session s = new Session(c.instanceId(), c.secret(), link, caller);
            s.leaseSeconds = lease;
            s.ready.complete(s);
            sessions.put(s.id, s);
            log.debug("WS instance {} created for '{}', lease {} s", LogSafe.instance(s.id), LogSafe.text(clientName),
                    lease);
            return new Created(s.id, s.secret, lease);
        });
    }

    /**
     * Submit; returns the ids of the accepted tasks, in order ({@code ids} entries below 0 are given
     * the next free ids). A bundle sent again with the same ids is accepted again and queued once.
     */
    CompletableFuture<long[]> submit(Admission.Credential who, String from, Key key, List<SoapXml.ParsedTask> tasks) {
        if (tasks.isEmpty()) {
            throw WsFault.client("Submit has no <task>");
        }
        return session(who, from, key).thenCompose(s -> {
            long[] ids = new long[tasks.size()];
            List<Message.SubmittedTask> bundle = new ArrayList<>(tasks.size());
            synchronized (s) {
                for (int i = 0; i < ids.length; i++) {
                    Long given = tasks.get(i).id();
                    ids[i] = given != null ? given : s.nextAutoId;
                    s.nextAutoId = Math.max(s.nextAutoId, ids[i] + 1);
                }
            }
            for (int i = 0; i < ids.length; i++) {
                bundle.add(new Message.SubmittedTask(ids[i], TaskSpecCodec.encode(tasks.get(i).spec())));
            }
            return call(s.caller, id -> new Message.Submit(id, s.id, bundle)).thenApply(m -> ids);
        });
    }

    /** What GetResults returns: the results and how many tasks have no result returned yet. */
    record Fetched(List<Message.DeliveredResult> results, long outstanding) {
    }

    /**
     * GetResults: up to {@code max} results, waiting up to {@code waitSeconds} (at most half the
     * lease) for the first one. With {@code ack} (the highest {@code seq} the caller has), results up
     * to it are dropped and those returned stay until a later ack (at-least-once); without, the
     * results returned are dropped at once (a lost reply loses them).
     */
    CompletableFuture<Fetched> results(Admission.Credential who, String from, Key key, int max, int waitSeconds,
                                       Long ack) {
        if (max < 1) {
            throw WsFault.client("GetResults: <max> must be at least 1, got " + max);
        }
        if (waitSeconds < 0) {
            throw WsFault.client("GetResults: <waitSeconds> must not be negative, got " + waitSeconds);
        }
        int take = Math.min(max, settings.maxResults());
        boolean drop = ack == null;
        return session(who, from, key).thenCompose(s -> {
            if (ack != null) {
                acknowledge(s, ack, false);
            }
            return unfinished(s).thenCompose(left -> {
                Fetched now = take(s, take, drop, left);
                if (!now.results().isEmpty() || waitSeconds == 0 || now.outstanding() == 0) {
                    return CompletableFuture.completedFuture(now);
                }
                long waitMillis = Math.min(TimeUnit.SECONDS.toMillis(Math.min(waitSeconds, settings.maxWaitSeconds())),
                        TimeUnit.SECONDS.toMillis(s.leaseSeconds) / 2);
                CompletableFuture<Void> arrived = new CompletableFuture<>();
                synchronized (s) {
                    if (s.results.isEmpty() && s.goneReason == null && !closed) {
                        s.waiters.add(arrived);
                    } else {
                        arrived.complete(null);
                    }
                }
                return arrived.completeOnTimeout(null, waitMillis, TimeUnit.MILLISECONDS).thenCompose(v -> {
                    synchronized (s) {
                        s.waiters.remove(arrived);
                        if (s.goneReason != null) {
                            throw goneFault(s);
                        }
                    }
                    return unfinished(s).thenApply(after -> take(s, take, drop, after));
                });
            }).exceptionally(err -> {
                throw goneOr(s, err);
            });
        });
    }

    /**
     * The fault for a call on {@code s} that failed with {@code err}: if the instance went away
     * meanwhile (destroyed, expired), that, the same whichever step of the call noticed it (results
     * it still held went with it: nobody can fetch them once its key is unknown).
     */
    private static RuntimeException goneOr(Session s, Throwable err) {
        Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
        synchronized (s) {
            if (s.goneReason != null) {
                return goneFault(s);
            }
        }
        return cause instanceof RuntimeException re ? re : new CompletionException(cause);
    }

    private static WsFault goneFault(Session s) {
        return WsFault.of(ErrorCode.UNKNOWN_INSTANCE, "instance " + LogSafe.instance(s.id) + " is gone: " + s.goneReason);
    }

    /**
     * Takes up to {@code n} results; {@code drop}: they are acknowledged and forgotten now. The
     * outstanding count is what the scheduler knew of at {@code known} (tasks queued and running, and
     * results so far) less what has been returned: exact whatever arrives meanwhile.
     */
    private Fetched take(Session s, int n, boolean drop, Known known) {
        List<Message.DeliveredResult> out = new ArrayList<>(Math.min(n, 64));
        long last = 0;
        long remaining;
        synchronized (s) {
            if (drop) {
                while (out.size() < n && !s.results.isEmpty()) {
                    Message.DeliveredResult r = s.results.pollFirst();
                    out.add(r);
                    last = r.seq();
                }
            } else {
                for (Message.DeliveredResult r : s.results) {
                    if (out.size() == n) {
                        break;
                    }
                    out.add(r);
                }
            }
            if (!out.isEmpty()) {
                s.returnedSeq = Math.max(s.returnedSeq, out.get(out.size() - 1).seq());
            }
            remaining = known.unfinished() + known.lastSeq() - s.returnedSeq;
        }
        if (drop && last > 0) {
            acknowledge(s, last, true);
        }
        return new Fetched(out, Math.max(0, remaining));
    }

    /** What the scheduler reported of an instance at one moment. */
    private record Known(long unfinished, long lastSeq) {
    }

    /** The scheduler may forget results up to {@code upToSeq}; so may this session. */
    private void acknowledge(Session s, long upToSeq, boolean taken) {
        if (!taken) {
            synchronized (s) {
                while (!s.results.isEmpty() && s.results.peekFirst().seq() <= upToSeq) {
                    s.results.pollFirst();
                }
            }
        }
        admission.accept(s.caller, new Message.Ack(s.id, upToSeq)); // a client's ACK: always taken
    }

    /** The instance's unfinished tasks (queued or running) and results so far, from the scheduler; also its lease. */
    private CompletableFuture<Known> unfinished(Session s) {
        return call(s.caller, id -> new Message.StatusRequest(id, s.id)).thenApply(m -> {
            JsonNode doc = parse(((Message.Status) m).json());
            s.leaseSeconds = doc.path("leaseSeconds").asLong(s.leaseSeconds);
            return new Known(doc.path("queued").asLong() + doc.path("running").asLong(), doc.path("lastSeq").asLong());
        });
    }

    /**
     * GetStatus: the scheduler's status document; for an instance also its unfetched results, the
     * GetResults calls waiting for results, and its lease (-1, 0 and 0 for the dispatcher's).
     */
    record Status(JsonNode document, long unfetched, int waitingPolls, long leaseSeconds) {
    }

    CompletableFuture<Status> status(Admission.Credential who, String from, Key key) {
        if (key == null) {
            // the dispatcher-wide document: any authenticated caller, on a link owning nothing
            Caller caller = admission.caller(who, new WsLink("ws " + from, this::receive, () -> { }), "ws",
                    Role.CLIENT);
            return call(caller, id -> new Message.StatusRequest(id, 0))
                    .thenApply(m -> new Status(parse(((Message.Status) m).json()), -1, 0, 0));
        }
        return session(who, from, key).thenCompose(s -> call(s.caller, id ->
                new Message.StatusRequest(id, s.id)).thenApply(m -> {
                    long unfetched;
                    int waiting;
                    synchronized (s) {
                        unfetched = s.results.size();
                        waiting = s.waiters.size();
                    }
                    return new Status(parse(((Message.Status) m).json()), unfetched, waiting, s.leaseSeconds);
                }));
    }

    /** Destroy; returns the number of unfinished tasks cancelled. */
    CompletableFuture<Integer> destroy(Admission.Credential who, String from, Key key) {
        return session(who, from, key).thenCompose(s -> {
            // gone before it is sent: replies complete on a pool, so a poll that the scheduler answers
            // "unknown instance" could otherwise be seen before this Destroy's own reply. The session
            // stays in the map, gone, until the reply: a call meanwhile must not take the instance over
            // on a new link (the Destroy would then be refused as not this link's).
            markGone(s, "destroyed by a Destroy call");
            return call(s.caller, id -> new Message.Destroy(id, s.id))
                    .whenComplete((m, err) -> sessions.remove(s.id, s))
                    .thenApply(m -> ((Message.Destroyed) m).cancelled());
        });
    }

    /** Halt; returns the number of tasks not yet started that were cancelled. */
    CompletableFuture<Integer> halt(Admission.Credential who, String from, Key key) {
        return session(who, from, key).thenCompose(s -> {
            return call(s.caller, id -> new Message.Halt(id, s.id))
                    .thenApply(m -> ((Message.Halted) m).cancelled());
        });
    }

    /** CancelTasks; returns how many of the tasks named were unfinished (and are cancelled now). */
    CompletableFuture<Integer> cancelTasks(Admission.Credential who, String from, Key key, long[] clientTaskIds) {
        return session(who, from, key).thenCompose(s -> call(s.caller,
                id -> new Message.CancelTasks(id, s.id, clientTaskIds))
                .thenApply(m -> ((Message.TasksCancelled) m).cancelled()));
    }

    // ---- sessions --------------------------------------------------------------------------

    /**
     * The session of {@code key}: the one this gateway holds (its secret checked in constant time),
     * or, for an instance the gateway does not hold (the dispatcher restarted from its journal), a
     * new link that takes the instance over with the key's secret.
     */
    private CompletableFuture<Session> session(Admission.Credential who, String from, Key key) {
        if (closed) {
            return CompletableFuture.failedFuture(WsFault.of(ErrorCode.SHUTTING_DOWN, "the dispatcher is shutting down"));
        }
        Session s = sessions.get(key.id());
        if (s == null) {
            Session fresh = newSession(who, from, key);
            s = sessions.putIfAbsent(key.id(), fresh);
            if (s == null) {
                // sent outside any map operation: its reply may complete on another thread at once
                s = fresh;
                attach(s, key, from);
            }
        }
        if (!MessageDigest.isEqual(s.secret.getBytes(StandardCharsets.US_ASCII),
                key.secret().getBytes(StandardCharsets.US_ASCII))) {
            return CompletableFuture.failedFuture(unknown(key));
        }
        synchronized (s) {
            if (s.goneReason != null) {
                return CompletableFuture.failedFuture(goneFault(s));
            }
        }
        return s.ready;
    }

    private Session newSession(Admission.Credential who, String from, Key key) {
        WsLink link = new WsLink("ws " + from, this::receive, () -> { });
        return new Session(key.id(), key.secret(), link, admission.caller(who, link, "ws", Role.CLIENT));
    }

    private void attach(Session s, Key key, String from) {
        call(s.caller, id -> new Message.Attach(id, key.id(), key.secret())).whenComplete((m, err) -> {
            if (err != null) {
                sessions.remove(key.id(), s);
                s.ready.completeExceptionally(err instanceof CompletionException && err.getCause() != null
                        ? err.getCause() : err);
                return;
            }
            Message.Attached a = (Message.Attached) m;
            synchronized (s) {
                s.nextAutoId = Math.max(s.nextAutoId, a.highestClientTaskId() + 1);
            }
            s.leaseSeconds = settings.defaultLeaseSeconds(); // the scheduler keeps the real one
            log.info("WS instance {} taken over by a caller from {} ({} results waiting)", LogSafe.instance(key.id()),
                    LogSafe.text(from), a.redelivered());
            s.ready.complete(s);
        });
    }

    private static WsFault unknown(Key key) {
        return WsFault.of(ErrorCode.UNKNOWN_INSTANCE, "unknown instance " + key + " (never created, destroyed, "
                + "its lease ran out, or the key's secret is wrong)");
    }

    private void gone(Session s, String reason) {
        sessions.remove(s.id, s);
        markGone(s, reason);
    }

    /** Fails the session's calls from now on and wakes its waiting polls. */
    private static void markGone(Session s, String reason) {
        List<CompletableFuture<Void>> wake;
        synchronized (s) {
            s.goneReason = reason;
            wake = new ArrayList<>(s.waiters);
            s.waiters.clear();
        }
        wake.forEach(w -> w.complete(null));
    }

    // ---- the scheduler's side --------------------------------------------------------------

    /**
     * Sends a request (made with the id its reply will carry) through the admission stage and waits
     * (without a thread) for its reply.
     */
    private CompletableFuture<Message> call(Caller caller, LongFunction<Message> build) {
        if (closed) {
            return CompletableFuture.failedFuture(WsFault.of(ErrorCode.SHUTTING_DOWN, "the dispatcher is shutting down"));
        }
        CompletableFuture<Message> reply = new CompletableFuture<>();
        long requestId = requests.open(reply);
        Message request = build.apply(requestId);
        String refused = admission.accept(caller, request); // only client requests are made here: never refused
        if (refused != null) {
            requests.take(requestId);
            return CompletableFuture.failedFuture(WsFault.server(refused));
        }
        return reply.orTimeout(settings.replyTimeoutSeconds(), TimeUnit.SECONDS).handle((m, err) -> {
            requests.take(requestId); // after a timeout: a late reply finds nobody
            if (err != null) {
                Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
                if (cause instanceof TimeoutException) {
                    throw WsFault.server("the scheduler did not answer " + request.type() + " within "
                            + settings.replyTimeoutSeconds() + " s; it may have been carried out (a Submit can be "
                            + "sent again with the same task ids: it is not queued twice)");
                }
                throw cause instanceof WsFault f ? f : WsFault.server(String.valueOf(cause.getMessage()));
            }
            if (m instanceof Message.ErrorMessage e) {
                throw WsFault.of(e.errorCode(), switch (e.errorCode()) {
                    case UNKNOWN_INSTANCE -> "unknown instance: " + e.message();
                    case BUSY -> e.message() + " (the same Submit, with the same task ids, is queued once)";
                    default -> e.message();
                });
            }
            return m;
        });
    }

    /**
     * A batch the scheduler sent one of our links (on the thread that sends batches): results go to
     * their session at once; replies complete on the worker pool, after the batch's results are in.
     */
    private void receive(List<Message> messages) {
        List<Runnable> replies = null;
        for (int i = 0, n = messages.size(); i < n; i++) {
            Message m = messages.get(i);
            if (m instanceof Message.Deliver d) {
                delivered(d);
            } else if (m instanceof Message.Destroyed d && d.requestId() == 0) {
                Session s = sessions.get(d.instanceId());
                if (s != null) {
                    gone(s, "its lease ran out with no call");
                }
            } else {
                CompletableFuture<Message> f = requests.take(Requests.replyTo(m));
                if (f != null) {
                    (replies == null ? replies = new ArrayList<>() : replies).add(() -> f.complete(m));
                } else {
                    log.debug("WS gateway: no caller waits for {}", m.type());
                }
            }
        }
        if (replies != null) {
            for (Runnable r : replies) {
                completions.execute(r);
            }
        }
    }

    private void delivered(Message.Deliver d) {
        Session s = sessions.get(d.instanceId());
        if (s == null) {
            return; // destroyed meanwhile: nobody can fetch these any more
        }
        List<CompletableFuture<Void>> wake;
        synchronized (s) {
            for (Message.DeliveredResult r : d.results()) {
                if (r.seq() > s.highestSeq) { // results redelivered on a re-attach are here already
                    s.results.addLast(r);
                    s.highestSeq = r.seq();
                }
            }
            wake = new ArrayList<>(s.waiters);
            s.waiters.clear();
        }
        for (CompletableFuture<Void> w : wake) {
            completions.execute(() -> w.complete(null));
        }
    }


    private static JsonNode parse(String json) {
        try {
            return JSON.readTree(json);
        } catch (IOException e) {
            throw new IllegalStateException("the scheduler's status is not JSON", e);
        }
    }

    // ---- keys ------------------------------------------------------------------------------

    static String format(long id, String secret) {
        return Long.toUnsignedString(id, 16) + "-" + secret;
    }

    /** Parses an instance key as CreateInstance returned it ({@code ID-SECRET}). */
    static Key parseKey(String key, String op) {
        String k = key == null ? "" : key.trim();
        int dash = k.indexOf('-');
        if (dash < 1 || dash > 16 || k.length() - dash - 1 != 32
                || !k.substring(dash + 1).chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
            throw WsFault.client(op + ": <key> is not an instance key (ID-SECRET in hex, as CreateInstance "
                    + "returned it)");
        }
        try {
            return new Key(Long.parseUnsignedLong(k.substring(0, dash), 16), k.substring(dash + 1).toLowerCase());
        } catch (NumberFormatException e) {
            throw WsFault.client(op + ": <key> is not an instance key (ID-SECRET in hex)");
        }
    }

    // ---- shutdown --------------------------------------------------------------------------

    /**
     * Fails the calls in progress. The WS instances are not destroyed: like a TCP client that went
     * away, each is detached and its lease runs (journaled, it survives a restart).
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (CompletableFuture<Message> f : requests.takeAll()) {
            f.completeExceptionally(WsFault.of(ErrorCode.SHUTTING_DOWN, "the dispatcher is shutting down"));
        }
        for (Session s : sessions.values()) {
            admission.gone(s.caller);
            gone(s, "the dispatcher is shutting down");
        }
    }
}
