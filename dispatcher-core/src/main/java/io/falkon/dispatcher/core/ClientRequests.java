package io.falkon.dispatcher.core;

import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Execution;
import io.falkon.protocol.LogSafe;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpecCodec;
import io.falkon.protocol.TaskStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What clients ask, and their instances' lives: CREATE_INSTANCE, SUBMIT, STATUS_REQUEST, DESTROY, CANCEL_TASKS,
 * HALT, ATTACH (and ATTACH_MOVED), ACK, a client's connection closing, and a detached instance's lease running out.
 * Instances are isolated: a connection sees, submits to and destroys only its own (ATTACH with the
 * secret takes one over). An instance with a lease outlives its client's connection; its results
 * are kept until the client acknowledges them, and a client re-attaches to get them back.
 */
final class ClientRequests {
    private static final Logger log = LoggerFactory.getLogger(ClientRequests.class);
    /** Kept results go back to a client that takes its instance over in DELIVERs of at most this much. */
    static final long REDELIVER_CHUNK_BYTES = 4 << 20;
    static final int REDELIVER_CHUNK_RESULTS = 10_000;

    private final Core core;
    private final Outcomes outcomes;
    /** The dispatcher's status at this moment (STATUS_REQUEST for the whole dispatcher). */
    private final java.util.function.Supplier<StatusSnapshot> snapshot;
    private final StatusRenderer renderer;
    /** Where a restarted dispatcher's replayed tasks wait for their client (released on ATTACH). */
    private final Recovery recovery;

    ClientRequests(Core core, Outcomes outcomes, java.util.function.Supplier<StatusSnapshot> snapshot,
                   StatusRenderer renderer, Recovery recovery) {
        this.recovery = recovery;
        this.core = core;
        this.outcomes = outcomes;
        this.snapshot = snapshot;
        this.renderer = renderer;
    }

    void handle(Event e) {
        Link link = e.link();
        Message m = e.message();
        switch (m.type()) {
            case CREATE_INSTANCE -> createInstance(link, (Message.CreateInstance) m);
            case SUBMIT -> submit(link, (Message.Submit) m, e.scans());
            case STATUS_REQUEST -> status(link, (Message.StatusRequest) m);
            case DESTROY -> destroy(link, (Message.Destroy) m);
            case HALT -> halt(link, (Message.Halt) m);
            case CANCEL_TASKS -> cancelTasks(link, (Message.CancelTasks) m);
            case ATTACH -> {
                Message.Attach a = (Message.Attach) m;
                attach(link, a.requestId(), a.instanceId(), a.secret(), NONE_MOVED);
            }
            case ATTACH_MOVED -> {
                Message.AttachMoved a = (Message.AttachMoved) m;
                attach(link, a.requestId(), a.instanceId(), a.secret(), a.movedClientTaskIds());
            }
            case ACK -> ack(link, (Message.Ack) m);
            case ERROR -> {
                Message.ErrorMessage err = (Message.ErrorMessage) m; // the admission stage refused the request
                if (err.errorCode() == ErrorCode.BUSY) {
                    core.memory.refused(); // too many bundles waiting for this thread (SchedulerLoop#offerBundle)
                }
                core.instances.client(link);
                core.replyError(link, err.requestId(), err.errorCode(), err.message());
            }
            // unreachable: Admission hands on only what Role.CLIENT sends (and its own ERROR answers)
            default -> throw new IllegalArgumentException(m.type() + " is not a client request");
        }
    }

    private void createInstance(Link link, Message.CreateInstance req) {
        core.refreshClock();
        core.instances.client(link);
        if (core.shuttingDown) {
            core.replyError(link, req.requestId(), ErrorCode.SHUTTING_DOWN, "the dispatcher is shutting down");
            return;
        }
        Instance in = core.instances.create(link, req.clientName(), req.leaseSeconds(), core.nowMicros);
        core.instances.touched(in, core.tickMicros);
        if (in.retainsResults()) {
            core.journal.instanceCreated(in.record());
        }
        log.debug("instance {} created for '{}' at {}", LogSafe.instance(in.id), LogSafe.text(req.clientName()),
                link.remote());
        core.outbox.send(link, new Message.InstanceCreated(req.requestId(), in.id, in.secret));
    }

    private Instance ownedInstance(Link link, long requestId, long instanceId) {
        core.instances.client(link);
        core.refreshClock();
        Instance in = core.instances.owned(link, instanceId, core.tickMicros);
        if (in == null) {
            core.replyError(link, requestId, ErrorCode.UNKNOWN_INSTANCE,
                    "no instance " + LogSafe.instance(instanceId) + " on this connection");
        }
        return in;
    }

    /**
     * SUBMIT whose task specs the transport has already validated; {@code scans} has one per task.
     * Client task ids are unique within an instance: a bundle whose every id was accepted before is a
     * re-sent bundle (after a reconnection, or a retried WS call whose reply was lost) and is answered
     * as accepted again without queueing anything; a bundle that reuses some ids, or repeats one, is
     * refused as a whole.
     */
    private void submit(Link link, Message.Submit req, TaskSpecCodec.Scan[] scans) {
        Instance in = ownedInstance(link, req.requestId(), req.instanceId());
        if (in == null) {
            return;
        }
        if (core.shuttingDown) {
            core.replyError(link, req.requestId(), ErrorCode.SHUTTING_DOWN, "the dispatcher is shutting down");
            return;
        }
        List<Message.SubmittedTask> tasks = req.tasks();
        String refused = in.halted() ? "instance " + LogSafe.instance(in.id) + " was halted: it starts nothing more"
                : duplicates(in, tasks);
        if (refused != null && refused.isEmpty()) { // every id accepted before: the same bundle again
            core.outbox.send(link, new Message.Submitted(req.requestId(), in.id, tasks.size()));
            return;
        }
        core.checkMemory();
        if (refused == null && core.memory.refusing()) {
            core.memory.refused();
            core.replyError(link, req.requestId(), ErrorCode.BUSY, "the dispatcher is over its memory budget of "
                    + (core.memory.budgetBytes() >> 20) + " MiB; nothing of this bundle was queued: send it again later");
            return;
        }
        refused = refused != null ? refused : Workflows.problem(in, tasks, scans);
        if (refused != null) {
            core.replyError(link, req.requestId(), ErrorCode.INVALID_TASK, refused + "; nothing of this bundle was queued");
            return;
        }
        Dataflow.Key[] failed = new Dataflow.Key[1];
        for (int i = 0, n = tasks.size(); i < n; i++) {
            Message.SubmittedTask s = tasks.get(i);
            in.accept(s.clientTaskId());
            if (in.retainsResults()) {
                core.journal.accepted(in.id, s.clientTaskId(), core.nowMicros, s.spec());
            }
            Task t = core.ledger.accept(in, s.clientTaskId(), s.spec(), core.nowMicros, scans[i], failed);
            if (failed[0] != null) {
                outcomes.dependencyFailed(t, failed[0]);
                failed[0] = null;
            } else if (t.sized() && t.queued) {
                outcomes.refuseIfTooLarge(t);
            }
        }
        core.outbox.send(link, new Message.Submitted(req.requestId(), in.id, tasks.size()));
    }

    /**
     * Null when every id of the bundle is new and distinct; empty when every id was accepted before
     * (a re-sent bundle); otherwise why the bundle is refused, naming the first offending task.
     */
    private static String duplicates(Instance in, List<Message.SubmittedTask> tasks) {
        int seen = 0;
        for (int i = 0, n = tasks.size(); i < n; i++) {
            if (in.hasAccepted(tasks.get(i).clientTaskId())) {
                seen++;
            }
        }
        if (seen == tasks.size() && seen > 0) {
            return "";
        }
        Set<Long> inBundle = null;
        long previous = Long.MIN_VALUE;
        for (int i = 0, n = tasks.size(); i < n; i++) {
            long id = tasks.get(i).clientTaskId();
            if (in.hasAccepted(id)) {
                return "task " + i + " of the bundle (clientTaskId " + Long.toUnsignedString(id)
                        + "): the id is already used in this instance";
            }
            // clients number tasks in increasing order: only a bundle that is not needs a set
            if (inBundle == null && id <= previous && i > 0) {
                inBundle = new HashSet<>();
                for (int k = 0; k < i; k++) {
                    inBundle.add(tasks.get(k).clientTaskId());
                }
            }
            if (inBundle != null && !inBundle.add(id)) {
                return "task " + i + " of the bundle (clientTaskId " + Long.toUnsignedString(id)
                        + "): the id appears twice in the bundle";
            }
            previous = id;
        }
        return null;
    }

    private void destroy(Link link, Message.Destroy req) {
        Instance in = ownedInstance(link, req.requestId(), req.instanceId());
        if (in == null) {
            return;
        }
        int cancelled = outcomes.cancel(in, "instance destroyed");
        core.outbox.deliverNow(in);
        outcomes.forget(in);
        core.outbox.send(link, new Message.Destroyed(req.requestId(), in.id, cancelled));
    }

    /**
     * HALT: nothing more of the instance starts. Its queued tasks end CANCELLED (delivered, and
     * journaled, as any result); its running ones finish; later SUBMITs are refused.
     */
    private void halt(Link link, Message.Halt req) {
        Instance in = ownedInstance(link, req.requestId(), req.instanceId());
        if (in == null) {
            return;
        }
        in.halt();
        int n = outcomes.cancelQueued(in, Execution.of(TaskStatus.CANCELLED,
                "the instance was halted before the task started", core.nowMicros));
        core.outbox.send(link, new Message.Halted(req.requestId(), in.id, n));
    }

    /**
     * CANCEL_TASKS: the named tasks of the instance end CANCELLED (delivered, and journaled, as any
     * result), the running ones killed on their executors; the instance goes on.
     */
    private void cancelTasks(Link link, Message.CancelTasks req) {
        Instance in = ownedInstance(link, req.requestId(), req.instanceId());
        if (in == null) {
            return;
        }
        int n = outcomes.cancelTasks(in, req.clientTaskIds(), "cancelled by its client");
        core.outbox.send(link, new Message.TasksCancelled(req.requestId(), in.id, n));
    }

    /**
     * ATTACH: the connection takes over an instance (its own after reconnecting, or one whose id and
     * secret it was given), and the results delivered but not acknowledged are delivered again, after
     * the ATTACHED reply. A wrong secret is answered exactly like an unknown id.
     *
     * <p>After a restart the instance's replayed tasks, held for this moment, are queued; those the
     * client names as moved to other dispatchers (ATTACH_MOVED, failover) are cancelled in this same
     * step, so no scheduling round can start them here again. A moved task that was running here all
     * along (a dispatcher that only hung) is cancelled on its executor.
     */
    private void attach(Link link, long requestId, long instanceId, String secret, long[] moved) {
        core.instances.client(link);
        core.refreshClock();
        Instance in = core.instances.get(instanceId);
        if (in == null || !in.secretMatches(secret)) {
            if (in != null) {
                log.warn("refused ATTACH to instance {} from {}: wrong secret", LogSafe.instance(in.id), link.remote());
            }
            core.replyError(link, requestId, ErrorCode.UNKNOWN_INSTANCE, "no instance "
                    + LogSafe.instance(instanceId) + " with that secret (destroyed, its lease ran out, it was "
                    + "created without a lease, or the secret is wrong)");
            return;
        }
        if (in.owner != null && in.owner != link) {
            log.info("instance {} re-attached from {} (was {})", LogSafe.instance(in.id), link.remote(),
                    in.owner.remote());
        }
        core.instances.attach(in, link);
        core.instances.touched(in, core.tickMicros);
        long kept = in.unackedCount();
        core.outbox.send(link, new Message.Attached(requestId, in.id, in.highestClientTaskId(),
                (int) Math.min(Integer.MAX_VALUE, kept)));
        if (kept > 0) {
            redeliver(link, in);
        }
        core.outbox.drop(in); // everything gathered for it is in unacked and was just sent
        recovery.release(in);
        if (moved.length > 0) {
            int n = outcomes.cancelTasks(in, moved, "moved to another dispatcher by its client (failover)");
            log.info("instance {} re-attached from {}: {} of the {} tasks its client moved elsewhere were unfinished "
                    + "here and are cancelled", LogSafe.instance(in.id), link.remote(), n, moved.length);
        }
    }

    private static final long[] NONE_MOVED = new long[0];

    /** Every kept result of the instance, in DELIVERs that each stay well within a frame. */
    private void redeliver(Link link, Instance in) {
        List<Message.DeliveredResult> chunk = new ArrayList<>();
        long[] bytes = {0};
        core.instances.forEachRetained(in, r -> {
            long b = Instance.footprint(r);
            if (!chunk.isEmpty() && (bytes[0] + b > REDELIVER_CHUNK_BYTES || chunk.size() >= REDELIVER_CHUNK_RESULTS)) {
                core.outbox.send(link, new Message.Deliver(in.id, new ArrayList<>(chunk)));
                chunk.clear();
                bytes[0] = 0;
            }
            chunk.add(r);
            bytes[0] += b;
        });
        if (!chunk.isEmpty()) {
            core.outbox.send(link, new Message.Deliver(in.id, chunk));
        }
    }

    /** ACK: the client has all results up to {@code upToSeq}; they need not be kept any longer. */
    private void ack(Link link, Message.Ack ack) {
        core.refreshClock();
        Instance in = core.instances.owned(link, ack.instanceId(), core.tickMicros);
        if (in == null) {
            return; // acknowledging what is gone changes nothing
        }
        if (core.instances.acknowledge(in, ack.upToSeq())) {
            core.journal.acked(in.id, ack.upToSeq());
        }
    }

    private void status(Link link, Message.StatusRequest req) {
        core.refreshClock();
        core.instances.client(link);
        if (req.instanceId() == 0) {
            core.outbox.send(link, new Message.Status(req.requestId(), renderer.dispatcher(snapshot.get())));
            return;
        }
        Instance in = ownedInstance(link, req.requestId(), req.instanceId());
        if (in != null) {
            core.outbox.send(link, new Message.Status(req.requestId(),
                    renderer.instance(StatusBuilder.row(in, core.tickMicros))));
        }
    }

    /**
     * A client's connection closed. Instances with a lease stay, detached, until it runs out (their
     * tasks keep running and their results are kept); the others are destroyed at once.
     */
    void disconnected(Link link) {
        if (core.shuttingDown) {
            core.instances.disconnected(link);
            return; // instances stay as journaled, for clients to re-attach after a restart
        }
        List<Instance> owned = core.instances.disconnected(link);
        if (owned.isEmpty()) {
            return;
        }
        core.refreshClock();
        for (Instance in : new ArrayList<>(owned)) {
            if (in.retainsResults()) {
                core.instances.detach(in, core.tickMicros);
                log.info("client {} disconnected: instance {} detached, kept for {} s", link.remote(),
                        LogSafe.instance(in.id), in.leaseMicros / 1_000_000);
                continue;
            }
            int n = outcomes.cancel(in, "client disconnected");
            core.outbox.drop(in);
            outcomes.forget(in);
            if (n > 0) {
                log.info("client {} disconnected: instance {} destroyed, {} unfinished tasks cancelled",
                        link.remote(), LogSafe.instance(in.id), n);
            }
        }
    }

    /** The timer: detached instances whose lease ran out are destroyed, their unfinished work cancelled. */
    void expireLeases() {
        for (Instance in : core.instances.expired(core.tickMicros)) {
            int n = outcomes.cancel(in, "lease expired");
            Link owner = in.owner;
            core.outbox.drop(in);
            outcomes.forget(in);
            if (owner != null) { // an idle owner (WS): told, with request id 0, that the instance is gone
                core.outbox.send(owner, new Message.Destroyed(0, in.id, n));
            }
            log.info("instance {} destroyed: its lease of {} s ran out with no client attached ({} tasks "
                    + "cancelled)", LogSafe.instance(in.id), in.leaseMicros / 1_000_000, n);
        }
    }
}
