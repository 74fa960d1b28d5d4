package io.falkon.transport.tcp;

import io.falkon.client.ConnectionLostException;
import io.falkon.client.MessageConnection;
import io.falkon.client.FalkonException;
import io.falkon.protocol.Message;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.auth.Token;
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
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

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
public final class TcpConnection extends MessageConnection {
    private static final Logger log = LoggerFactory.getLogger(TcpConnection.class);
    /** Room left in a frame for the SUBMIT's own fields. */
    private static final int FRAME_HEADROOM = 1024;

    private final EventLoopGroup group;
    private final EventLoop loop;
    private final PeerSession session;
    private final ConcurrentLinkedQueue<Message> outgoing = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    /** The dispatcher's frame limit, from its WELCOME. */
    private volatile int maxFrameLength = Protocol.DEFAULT_MAX_FRAME_LENGTH;
    private volatile boolean closed;

    private TcpConnection(String host, int port, Token token, Tls tls, Duration connectTimeout,
                          Duration reconnectFor) {
        super(host + ":" + port);
        this.group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("falkon-client", true),
                NioIoHandler.newFactory());
        this.loop = group.next();
        this.session = new PeerSession(new PeerSession.Config(host, port, Protocol.ROLE_CLIENT, token,
                "falkon-java-client/" + Protocol.VERSION, tls, connectTimeout, reconnectFor, Backoff.DEFAULT,
                Duration.ZERO), loop,
                new Events());
    }

    /**
     * Connects and completes the handshake.
     *
     * @param tls          TLS to the dispatcher, or null
     * @param reconnectFor how long to keep dialling after the connection breaks (zero: give up at once)
     * @throws FalkonException if the dispatcher cannot be reached or refuses the handshake
     */
    public static TcpConnection connect(String host, int port, Token token, Tls tls, Duration timeout,
                                        Duration reconnectFor) {
        TcpConnection conn = new TcpConnection(host, port, token, tls, timeout, reconnectFor);
        try {
            conn.session.start().get(timeout.toMillis() * 2, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            conn.close();
            throw new FalkonException("interrupted while connecting to " + conn.address(), e);
        } catch (ExecutionException | TimeoutException e) {
            conn.close();
            Throwable c = e instanceof ExecutionException ? e.getCause() : e;
            if (c instanceof PeerSession.RefusedException r) {
                throw new FalkonException(r.error().errorCode(), "dispatcher at " + conn.address()
                        + " refused the connection: " + r.error().message());
            }
            throw new FalkonException(c instanceof TimeoutException ? "no handshake from dispatcher at "
                    + conn.address() + " within " + timeout.toMillis() + " ms" : c.getMessage(), c);
        }
        return conn;
    }

    /** Queues a message for the I/O thread, which writes everything queued with one flush. */
    @Override
    protected void send(Message m) {
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
        return session.channel() != null && !failed() && !closed;
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
        if (!failed()) {
            failAll(new ConnectionLostException("the connection to dispatcher at " + address() + " was closed", null));
        }
    }

    @Override
    protected void failAll(Throwable cause) {
        super.failAll(cause);
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
                reconnected();
                outgoing.addAll(queued);
            }
            drain();
        }

        @Override
        public void received(Message m) {
            TcpConnection.this.received(m);
        }

        @Override
        public void lost(String why) {
            failRequests(new ConnectionLostException("connection to dispatcher at " + address() + " " + why
                    + "; reconnecting", null));
        }

        @Override
        public void refused(Message.ErrorMessage error) {
            failAll(new FalkonException(error.errorCode(), "dispatcher at " + address() + " refused the connection: "
                    + error.message()));
        }

        @Override
        public void gaveUp(String why) {
            if (!closed) {
                log.error("{}; giving up", why);
                failAll(new ConnectionLostException("connection to dispatcher at " + address() + " lost: " + why, null));
            }
        }
    }
}
