package io.falkon.client;

import io.falkon.protocol.Message;
import io.falkon.protocol.session.Requests;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;

/**
 * A connection that speaks the protocol's messages themselves, whatever carries them (frames over
 * TCP, or objects within this process): requests carry a request id and are matched to their
 * replies, DELIVERs are routed to their instance's {@link ResultSink}. A subclass sends messages
 * and hands what arrives to {@link #received} on its serial {@link #executor()} thread.
 *
 * <p>Public for the transports built elsewhere (the in-process one lives beside the dispatcher's
 * end it talks to); the protected methods are what a subclass implements and calls.
 */
public abstract class MessageConnection implements Connection {
    private static final Logger log = LoggerFactory.getLogger(MessageConnection.class);

    private final String address;
    private final Requests requests = new Requests();
    private final Map<Long, ResultSink> sinks = new ConcurrentHashMap<>();
    private volatile Throwable failure;

    protected MessageConnection(String address) {
        this.address = address;
    }

    /** Sends a message to the dispatcher, from any thread, in the order of the calls. */
    protected abstract void send(Message m);

    /** Whether the connection failed for good. */
    protected final boolean failed() {
        return failure != null;
    }

    private CompletableFuture<Message> request(LongFunction<Message> build) {
        CompletableFuture<Message> f = new CompletableFuture<>();
        Throwable failed = failure;
        if (failed != null) {
            f.completeExceptionally(lost(failed));
            return f;
        }
        long id = requests.open(f);
        send(build.apply(id));
        if (failure != null && requests.take(id) != null) {
            f.completeExceptionally(lost(failure));
        }
        return f;
    }

    final FalkonException lost(Throwable cause) {
        return cause instanceof FalkonException fe ? fe
                : new ConnectionLostException("connection to dispatcher at " + address + " lost", cause);
    }

    @Override
    public CompletableFuture<Message.InstanceCreated> createInstance(String clientName, long leaseSeconds) {
        return request(id -> new Message.CreateInstance(id, clientName, leaseSeconds))
                .thenApply(m -> (Message.InstanceCreated) m);
    }

    @Override
    public CompletableFuture<Integer> submit(long instanceId, List<Message.SubmittedTask> bundle) {
        return request(id -> new Message.Submit(id, instanceId, bundle))
                .thenApply(m -> ((Message.Submitted) m).accepted());
    }

    @Override
    public CompletableFuture<String> status(long instanceId) {
        return request(id -> new Message.StatusRequest(id, instanceId)).thenApply(m -> ((Message.Status) m).json());
    }

    @Override
    public CompletableFuture<Integer> destroy(long instanceId) {
        return request(id -> new Message.Destroy(id, instanceId)).thenApply(m -> ((Message.Destroyed) m).cancelled());
    }

    @Override
    public CompletableFuture<Integer> halt(long instanceId) {
        return request(id -> new Message.Halt(id, instanceId)).thenApply(m -> ((Message.Halted) m).cancelled());
    }

    @Override
    public CompletableFuture<Integer> cancelTasks(long instanceId, long[] taskIds) {
        return request(id -> new Message.CancelTasks(id, instanceId, taskIds))
                .thenApply(m -> ((Message.TasksCancelled) m).cancelled());
    }

    @Override
    public CompletableFuture<Message.Attached> attach(long instanceId, String secret) {
        return request(id -> new Message.Attach(id, instanceId, secret)).thenApply(m -> (Message.Attached) m);
    }

    @Override
    public CompletableFuture<Message.Attached> attachMoved(long instanceId, String secret, long[] moved) {
        return request(id -> new Message.AttachMoved(id, instanceId, secret, moved))
                .thenApply(m -> (Message.Attached) m);
    }

    @Override
    public void ack(long instanceId, long upToSeq) {
        send(new Message.Ack(instanceId, upToSeq));
    }

    @Override
    public void route(long instanceId, ResultSink sink) {
        sinks.put(instanceId, sink);
    }

    @Override
    public void unroute(long instanceId) {
        sinks.remove(instanceId);
    }

    @Override
    public String address() {
        return address;
    }

    /** Tells every sink the connection is back (its instances re-attach); on the I/O thread. */
    protected final void reconnected() {
        for (ResultSink sink : sinks.values()) {
            sink.reconnected();
        }
    }

    /** A message from the dispatcher, on the I/O thread. */
    protected final void received(Message m) {
        switch (m.type()) {
            case DELIVER -> {
                Message.Deliver d = (Message.Deliver) m;
                ResultSink sink = sinks.get(d.instanceId());
                if (sink != null) {
                    sink.deliver(d.results());
                }
            }
            default -> {
                long requestId = Requests.replyTo(m);
                if (requestId >= 0) {
                    replied(requestId, m);
                } else {
                    log.error("unexpected {} from dispatcher at {}", m.type(), address);
                }
            }
        }
    }

    private void replied(long requestId, Message m) {
        CompletableFuture<Message> f = requests.take(requestId);
        if (f == null) {
            log.warn("reply to unknown request {} from {}: {}", requestId, address, m.type());
            return;
        }
        if (m instanceof Message.ErrorMessage e) {
            f.completeExceptionally(new FalkonException(e.errorCode(), e.message()));
        } else {
            f.complete(m);
        }
    }

    /** Fails what waits for a reply on the connection that broke; those requests may have been lost. */
    protected final void failRequests(Throwable cause) {
        for (CompletableFuture<Message> f : requests.takeAll()) {
            f.completeExceptionally(lost(cause));
        }
    }

    /** For good: every sink and every request fails. */
    protected void failAll(Throwable cause) {
        if (failure == null) {
            failure = cause;
        }
        // sinks first: an instance must know it is lost before any of its futures fails
        for (ResultSink sink : sinks.values()) {
            sink.connectionLost(lost(cause));
        }
        failRequests(cause);
    }
}
