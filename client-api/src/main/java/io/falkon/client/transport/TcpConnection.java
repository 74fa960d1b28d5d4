package io.falkon.client.transport;

import io.falkon.client.ConnectionLostException;
import io.falkon.client.FalkonException;
import io.falkon.protocol.Message;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.session.Backoff;
import io.falkon.protocol.session.PeerSession;
import io.falkon.protocol.tls.Tls;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;

/**
 * The TCP transport: one {@link PeerSession} (handshake, heartbeats as the dispatcher announces
 * them, reconnection with back-off) on one I/O thread. Requests carry a request id and are matched
 * to their replies; DELIVER frames are routed to the instance's {@link ResultSink}. Outgoing
 * messages from any thread are queued and written by the I/O thread with one flush per drain, so
 * many small submissions cost one system call.
 *
 * <p>If the connection breaks, requests in flight fail with {@link ConnectionLostException}; once
 * the session is back, each sink hears {@link ResultSink#reconnected()} so that instances
 * re-attach. Messages sent meanwhile wait for the new connection. When reconnecting fails (or is
 * off) every sink hears {@link ResultSink#connectionLost}. Replies and sink calls happen on the I/O
 * thread, as the {@link Connection} contract says.
 */
public final class TcpConnection implements Connection {
    private static final Logger log = LoggerFactory.getLogger(TcpConnection.class);
    /** Room left in a frame for the SUBMIT's own fields. */
    private static final int FRAME_HEADROOM = 1024;

    private final EventLoopGroup group;
    private final EventLoop loop;
    private final PeerSession session;
    private final String address;
    private final AtomicLong requestIds = new AtomicLong();
    private final Map<Long, CompletableFuture<Message>> requests = new ConcurrentHashMap<>();
    private final Map<Long, ResultSink> sinks = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Message> outgoing = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    /** The dispatcher's frame limit, from its WELCOME. */
    private volatile int maxFrameLength = Protocol.DEFAULT_MAX_FRAME_LENGTH;
    private volatile Throwable failure;
    private volatile boolean closed;

    private TcpConnection(String host, int port, String token, Tls tls, Duration connectTimeout,
                          Duration reconnectFor) {
        this.group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("falkon-client", true),
                NioIoHandler.newFactory());
        this.loop = group.next();
        this.address = host + ":" + port;
        this.session = new PeerSession(new PeerSession.Config(host, port, Protocol.ROLE_CLIENT, token,
                "falkon-java-client/" + Protocol.VERSION, tls, connectTimeout, reconnectFor, Backoff.DEFAULT), loop,
                new Events());
    }

    /**
     * Connects and completes the handshake.
     *
     * @param tls          TLS to the dispatcher, or null
     * @param reconnectFor how long to keep dialling after the connection breaks (zero: give up at once)
     * @throws FalkonException if the dispatcher cannot be reached or refuses the handshake
     */
    public static TcpConnection connect(String host, int port, String token, Tls tls, Duration timeout,
                                        Duration reconnectFor) {
        TcpConnection conn = new TcpConnection(host, port, token, tls, timeout, reconnectFor);
        try {
            conn.session.start().get(timeout.toMillis() * 2, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            conn.close();
            throw new FalkonException("interrupted while connecting to " + conn.address, e);
        } catch (ExecutionException | TimeoutException e) {
            conn.close();
            Throwable c = e instanceof ExecutionException ? e.getCause() : e;
            if (c instanceof PeerSession.RefusedException r) {
                throw new FalkonException(r.error().errorCode(), "dispatcher at " + conn.address
                        + " refused the connection: " + r.error().message());
            }
            throw new FalkonException(c instanceof TimeoutException ? "no handshake from dispatcher at "
                    + conn.address + " within " + timeout.toMillis() + " ms" : c.getMessage(), c);
        }
        return conn;
    }

    /** Queues a message for the I/O thread, which writes everything queued with one flush. */
    private void send(Message m) {
        outgoing.add(m);
        if (drainScheduled.compareAndSet(false, true)) {
            loop.execute(this::drain);
        }
    }

    private void drain() {
        drainScheduled.set(false);
        Channel ch = session.channel();
        if (ch == null) {
            return; // reconnecting: the queue waits for the next connection
        }
        Message m;
        boolean wrote = false;
        while ((m = outgoing.poll()) != null) {
            ch.write(m, ch.voidPromise());
            wrote = true;
        }
        if (wrote) {
            ch.flush();
        }
    }

    private CompletableFuture<Message> request(LongFunction<Message> build) {
        CompletableFuture<Message> f = new CompletableFuture<>();
        Throwable failed = failure;
        if (failed != null) {
            f.completeExceptionally(lost(failed));
            return f;
        }
        long id;
        do {
            id = requestIds.incrementAndGet() & 0xFFFF_FFFFL;
        } while (id == 0);
        requests.put(id, f);
        send(build.apply(id));
        if (failure != null && requests.remove(id) != null) {
            f.completeExceptionally(lost(failure));
        }
        return f;
    }

    private FalkonException lost(Throwable cause) {
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
    public CompletableFuture<Message.Attached> attach(long instanceId, String secret) {
        return request(id -> new Message.Attach(id, instanceId, secret)).thenApply(m -> (Message.Attached) m);
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
    public Executor executor() {
        return loop;
    }

    @Override
    public int maxBundleBytes() {
        return maxFrameLength - FRAME_HEADROOM;
    }

    @Override
    public boolean connected() {
        return session.channel() != null && failure == null && !closed;
    }

    @Override
    public String address() {
        return address;
    }

    /** The heartbeat interval the dispatcher announced (0: off). */
    public long heartbeatMillis() {
        return session.heartbeatMillis();
    }

    @Override
    public void close() {
        closed = true;
        session.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        if (failure == null) {
            failAll(new ConnectionLostException("the connection to dispatcher at " + address + " was closed", null));
        }
    }

    private void replied(long requestId, Message m) {
        CompletableFuture<Message> f = requests.remove(requestId);
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
    private void failRequests(Throwable cause) {
        for (Long id : requests.keySet()) {
            CompletableFuture<Message> f = requests.remove(id);
            if (f != null) {
                f.completeExceptionally(lost(cause));
            }
        }
    }

    /** For good: every sink and every request fails. */
    private void failAll(Throwable cause) {
        if (failure == null) {
            failure = cause;
        }
        // sinks first: an instance must know it is lost before any of its futures fails
        for (ResultSink sink : sinks.values()) {
            sink.connectionLost(lost(cause));
        }
        failRequests(cause);
        outgoing.clear();
    }

    /** The session's events, on the I/O thread. */
    private final class Events implements PeerSession.Listener {
        @Override
        public void welcomed(Channel channel, Message.Welcome welcome, boolean again) {
            maxFrameLength = welcome.maxFrameLength();
            if (again) {
                // what was queued while reconnecting goes after the instances' ATTACHes: a SUBMIT
                // ahead of its instance's ATTACH would be refused as not this connection's
                List<Message> queued = new ArrayList<>();
                Message m;
                while ((m = outgoing.poll()) != null) {
                    queued.add(m);
                }
                for (ResultSink sink : sinks.values()) {
                    sink.reconnected();
                }
                outgoing.addAll(queued);
            }
            drain();
        }

        @Override
        public void received(Message m) {
            switch (m.type()) {
                case DELIVER -> {
                    Message.Deliver d = (Message.Deliver) m;
                    ResultSink sink = sinks.get(d.instanceId());
                    if (sink != null) {
                        sink.deliver(d.results());
                    }
                }
                case SUBMITTED -> replied(((Message.Submitted) m).requestId(), m);
                case INSTANCE_CREATED -> replied(((Message.InstanceCreated) m).requestId(), m);
                case STATUS -> replied(((Message.Status) m).requestId(), m);
                case DESTROYED -> replied(((Message.Destroyed) m).requestId(), m);
                case ATTACHED -> replied(((Message.Attached) m).requestId(), m);
                case ERROR -> replied(((Message.ErrorMessage) m).requestId(), m);
                default -> log.error("unexpected {} from dispatcher at {}", m.type(), address);
            }
        }

        @Override
        public void lost(String why) {
            failRequests(new ConnectionLostException("connection to dispatcher at " + address + " " + why
                    + "; reconnecting", null));
        }

        @Override
        public void refused(Message.ErrorMessage error) {
            failAll(new FalkonException(error.errorCode(), "dispatcher at " + address + " refused the connection: "
                    + error.message()));
        }

        @Override
        public void gaveUp(String why) {
            if (!closed) {
                log.error("{}; giving up", why);
                failAll(new ConnectionLostException("connection to dispatcher at " + address + " lost: " + why, null));
            }
        }
    }
}
