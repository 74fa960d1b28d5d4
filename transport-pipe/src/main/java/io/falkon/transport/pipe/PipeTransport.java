package io.falkon.transport.pipe;

import io.falkon.dispatcher.admission.Admission;
import io.falkon.dispatcher.admission.ServerTransport;
import io.falkon.protocol.Message;
import io.falkon.protocol.MessageCodec;
import io.falkon.protocol.Protocol;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.io.InputStream;
import java.io.OutputStream;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The dispatcher's end of the connections of the executors {@code falkon run} starts itself: each
 * speaks the binary protocol over its own standard input and output ({@code falkon-executor-c
 * --dispatcher stdio}), as it would over TCP: the same frames, the same HELLO with the token, through
 * the same {@link io.falkon.dispatcher.admission.PeerProtocol} and admission stage. Plain threads read
 * and write them.
 *
 * <p>Why not TCP on 127.0.0.1: in a short run, Netty's listener and the first connection through it
 * were about a sixth of the wall time (event loops, channel pipeline and buffer allocator loaded and
 * interpreted before the first task could go; a Unix-domain socket costs the JDK's security providers
 * instead), and the executor could only dial once the listener was up (docs/benchmarks.md, "Local
 * executors over pipes"). A child started with pipes says HELLO while the dispatcher is still
 * starting: its frames wait in the pipe.
 *
 * <p>Nothing listens, so nothing outside the process tree can connect: a pipe's other end belongs to
 * the child the JVM started. The child still presents the token. A frame over the limit closes its
 * connection before it is read; a child that has not said HELLO within the handshake timeout is
 * closed. There are no heartbeats: the peer is a child process on this machine, whose end of the
 * pipes closes when it exits, however it dies, and no network lies between to break silently.
 */
public final class PipeTransport implements ServerTransport {

    /** @param handshakeTimeoutMillis a child that has not said HELLO by then is closed */
    public record Settings(String dispatcherId, int maxFrameLength, long handshakeTimeoutMillis) {
    }

    private final Settings settings;
    private final Admission admission;
    private final ScheduledExecutorService timer;
    private final List<PipeConnection> connections = new CopyOnWriteArrayList<>();
    private final AtomicInteger next = new AtomicInteger();
    private volatile boolean closed;

    public PipeTransport(Admission admission, Settings settings) {
        this.settings = settings;
        this.admission = admission;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "falkon-pipe-timer");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Serves a child's connection: {@code fromChild} is its standard output, {@code toChild} its
     * standard input ({@link Process#getInputStream()}, {@link Process#getOutputStream()}).
     *
     * @param name the peer, for logs ({@code local executor 0 (pid 1234)})
     */
    public void attach(String name, InputStream fromChild, OutputStream toChild) {
        PipeConnection c = new PipeConnection(name, next.getAndIncrement(), fromChild, toChild, settings, admission,
                timer, connections::remove);
        connections.add(c);
        if (closed) {
            c.closeAfterWrites();
            return;
        }
        c.start();
    }

    /**
     * Sets up the codec on a thread of its own, to be called as the children start: Netty's buffers
     * initialise themselves in 15-20 ms of CPU (platform probing, the allocator, the leak detector),
     * which the first frame would otherwise wait for on the reading thread while the executor's
     * registration is the run's critical path.
     */
    public static void prepare() {
        Thread t = new Thread(() -> {
            ByteBuf b = Unpooled.buffer(64);
            MessageCodec.encodeFrame(Message.Hello.of(Protocol.ROLE_EXECUTOR, "-", "-"), b);
            MessageCodec.decode(b.skipBytes(4));
            b.release();
        }, "falkon-pipe-prepare");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public String name() {
        return "pipe";
    }

    /** None: nothing listens. */
    @Override
    public int port() {
        return -1;
    }

    /**
     * Ends every connection once what was queued for it (the executors' SHUTTING_DOWN) is written: its
     * child reads that and the end of its input, and exits.
     */
    @Override
    public void close() {
        closed = true;
        for (PipeConnection c : connections) {
            c.closeAfterWrites();
        }
        timer.shutdownNow();
    }
}
