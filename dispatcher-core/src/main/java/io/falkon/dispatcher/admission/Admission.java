package io.falkon.dispatcher.admission;

import io.falkon.dispatcher.core.Event;
import io.falkon.dispatcher.core.Link;
import io.falkon.dispatcher.core.SchedulerLoop;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Message;
import io.falkon.protocol.MessageType;
import io.falkon.protocol.TaskSpecCodec;
import io.falkon.protocol.auth.Token;

import java.util.List;

/**
 * The one stage every transport passes a peer's messages through on their way to the scheduler:
 * authentication (the deployment's {@link Token}, compared in constant time: a {@link Caller}
 * exists only for a peer that presented it), then validation (every task spec decodes, no task is
 * larger than the per-task limit — the same limit over TCP and WS, checked at submission so that a
 * task that could never be dispatched is never accepted), and the caller's {@link Role} (only the
 * messages its role sends reach the scheduler, so no peer and no codec bug can hand the scheduler a
 * message it has no handler for). Ownership of instances is the scheduler's
 * to check, on its own thread, where the instances are. Transports are codecs around it: they turn
 * bytes into messages and the scheduler's answers back into bytes.
 */
public final class Admission {
    private final SchedulerLoop loop;
    private final Token token;
    /**
     * What a browser holds in its session cookie once it has presented the token (never the token
     * itself); derived when a browser first needs it: the HMAC loads four security providers,
     * 10 ms of the start of a dispatcher that may serve no browser (every falkon run).
     */
    private volatile Token session;
    private static final String SESSION_PURPOSE = "falkon dashboard session";
    private final int maxTaskBytes;
    private final BadRequestLog badRequests = new BadRequestLog();

    public Admission(SchedulerLoop loop, Token token, int maxTaskBytes) {
        this.loop = loop;
        this.token = token;
        this.maxTaskBytes = maxTaskBytes;
    }

    /** The peer on {@code link} as a caller in {@code role} if {@code presented} is the token; null if it is not. */
    public Caller authenticate(Link link, String transport, Role role, String presented) {
        Credential c = authenticate(transport + " " + link.remote(), presented);
        return c == null ? null : caller(c, link, transport, role);
    }

    /**
     * A caller inside this process ({@code falkon run}'s own client, connected without a socket):
     * nothing outside the process can reach it, so there is no token to check.
     */
    public Caller inProcess(Link link) {
        return new Caller(link, "in-process", Role.CLIENT);
    }

    /**
     * For request/response transports, where one authenticated request may speak for several links:
     * proof that {@code presented} is the token, or null (logged, rate-limited) if it is not.
     */
    public Credential authenticate(String from, String presented) {
        if (!token.admits(presented)) {
            badRequests.refused(from, presented == null || presented.isEmpty()
                    ? "no token presented" : "wrong token presented");
            return null;
        }
        return Credential.GRANTED;
    }

    /**
     * For HTTP requests from a browser: proof from the session cookie {@link #sessionCookie()} set
     * when it presented the token, or null (logged, rate-limited) if the cookie is not that.
     */
    public Credential authenticateSession(String from, String cookie) {
        if (!session().admits(cookie)) {
            badRequests.refused(from, cookie == null || cookie.isEmpty() ? "no token or session presented"
                    : "wrong session cookie presented");
            return null;
        }
        return Credential.GRANTED;
    }

    /** The session cookie's value a browser gets after presenting the token ("" without authentication). */
    public String sessionCookie() {
        return session().value();
    }

    private Token session() {
        Token s = session;
        if (s == null) { // computed twice at worst, to the same value
            s = token.derived(SESSION_PURPOSE);
            session = s;
        }
        return s;
    }

    /** The caller on {@code link} in {@code role}, for a request that authenticated. */
    public Caller caller(Credential proof, Link link, String transport, Role role) {
        if (proof != Credential.GRANTED) {
            throw new IllegalArgumentException("not an authenticated request");
        }
        return new Caller(link, transport, role);
    }

    /** Proof that a request presented the token; only {@link #authenticate} hands one out. */
    public static final class Credential {
        static final Credential GRANTED = new Credential();

        private Credential() {
        }
    }

    /** Whether callers must present a token at all. */
    public boolean authenticationRequired() {
        return token.required();
    }

    /** Where refused requests are logged (rate-limited). */
    public BadRequestLog badRequests() {
        return badRequests;
    }

    public int maxTaskBytes() {
        return maxTaskBytes;
    }

    /**
     * A message from an authenticated peer, on its way to the scheduler: null once it is on its way
     * (a SUBMIT that fails validation is answered with an ERROR naming the bad task, the connection
     * stays), or why the peer may not send it at all (the transport ends the connection with
     * UNEXPECTED_MESSAGE and this reason; the scheduler never sees the message). HEARTBEAT and a
     * peer's ERROR are the transport's, not the scheduler's: they are refused here too.
     */
    public String accept(Caller caller, Message m) {
        Role role = caller.role();
        if (!role.sends(m.type())) {
            return m.type() + " is not allowed from " + role.noun() + " (expected " + role.expected() + ")";
        }
        if (role == Role.EXECUTOR) {
            boolean register = m.type() == MessageType.REGISTER;
            if (register == caller.registered()) {
                return register ? "REGISTER is allowed once per connection"
                        : m.type() + " is not allowed here (expected REGISTER first)";
            }
            caller.registered(true);
            loop.submit(Event.executor(caller.link(), m));
        } else {
            client(caller, m);
        }
        return null;
    }

    /** A client request: a SUBMIT is validated first (and refused, with a reason naming the task, if it fails). */
    private void client(Caller caller, Message m) {
        if (m instanceof Message.Submit s) {
            Validated v = validate(s.tasks());
            if (v.problem() != null) {
                badRequests.refused(caller.toString(), "SUBMIT refused: " + v.problem());
                loop.submit(Event.client(caller.link(), Message.ErrorMessage.of(s.requestId(), ErrorCode.INVALID_TASK,
                        v.problem())));
                return;
            }
            if (!loop.offerBundle(Event.submit(caller.link(), s, v.scans()))) {
                loop.submit(Event.client(caller.link(), Message.ErrorMessage.of(s.requestId(), ErrorCode.BUSY,
                        "the dispatcher has " + (loop.pendingBundleBytes() >> 10) + " KiB of bundles waiting to be "
                        + "queued (its limit is " + (loop.maxPendingBundleBytes() >> 10) + " KiB); nothing of "
                        + "this bundle was queued: send it again later")));
            }
            return;
        }
        if (m instanceof Message.Ack) {
            loop.submitQuietly(Event.client(caller.link(), m)); // nobody waits for it
            return;
        }
        loop.submit(Event.client(caller.link(), m));
    }

    /**
     * The caller's connection ended: the scheduler forgets the client, or the executor and its tasks
     * (nothing to forget of an executor that never registered).
     */
    public void gone(Caller caller) {
        if (caller.role() == Role.CLIENT) {
            loop.submit(Event.gone(caller.link(), false));
        } else if (caller.registered()) {
            loop.submit(Event.gone(caller.link(), true));
        }
    }

    /** A bundle's scans, or why it is refused (naming the first bad task). */
    public record Validated(TaskSpecCodec.Scan[] scans, String problem) {
    }

    /** Checks every spec of a bundle: size, then content. Runs on the transport's thread. */
    public Validated validate(List<Message.SubmittedTask> tasks) {
        TaskSpecCodec.Scan[] scans = new TaskSpecCodec.Scan[tasks.size()];
        for (int i = 0, n = tasks.size(); i < n; i++) {
            Message.SubmittedTask t = tasks.get(i);
            String where = "task " + i + " of the bundle (clientTaskId " + Long.toUnsignedString(t.clientTaskId()) + ")";
            if (t.spec().length > maxTaskBytes) {
                return new Validated(null, where + ": its spec is " + t.spec().length + " bytes, over the limit of "
                        + maxTaskBytes + " bytes per task (falkon dispatcher --max-task-bytes); nothing of this "
                        + "bundle was queued");
            }
            scans[i] = TaskSpecCodec.scan(t.spec());
            if (!scans[i].valid()) {
                return new Validated(null, where + ": " + scans[i].problem() + "; nothing of this bundle was queued");
            }
        }
        return new Validated(scans, null);
    }
}
