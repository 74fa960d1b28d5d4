package io.falkon.transport.pipe;

import io.falkon.dispatcher.admission.Admission;
import io.falkon.dispatcher.admission.PeerProtocol;
import io.falkon.dispatcher.core.BufferedLink;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Message;
import io.falkon.protocol.MessageCodec;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.ProtocolException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One child's connection: a thread that reads frames from the child's standard output (a length,
 * checked against the limit before anything else is read, then the body) and hands each decoded
 * message to the {@link PeerProtocol}, which only that thread touches; and a thread that writes to
 * its standard input, so that the scheduler, which hands a batch to the link, never waits on a pipe.
 * A batch is encoded into one buffer and written with one call.
 *
 * <p>Ending the connection closes the child's input: it reads what was written, then the end, and
 * exits, which ends its output and so the reading thread. (A read blocked on a pipe is not woken by
 * closing the pipe in Java; the child's exit does wake it.)
 */
final class PipeConnection implements PeerProtocol.Wire {
    private static final Logger log = LoggerFactory.getLogger(PipeConnection.class);
    /** How long closing waits for what is queued to be written, then for the child to end its output. */
    private static final long DRAIN_MILLIS = 2_000;

    private final String name;
    private final DataInputStream in;
    private final OutputStream out;
    private final PipeTransport.Settings settings;
    private final Admission admission;
    private final ScheduledExecutorService timer;
    private final Consumer<PipeConnection> onEnd;
    private final PipeLink link = new PipeLink();
    private final PeerProtocol protocol;
    private final ExecutorService writer;
    private final Thread reader;
    private volatile ScheduledFuture<?> handshakeTimer;
    private volatile boolean helloSeen;
    /** The scheduler closed the link: what the child still sends is dropped. */
    private volatile boolean closing;
    private volatile boolean outputClosed;

    PipeConnection(String name, int n, InputStream fromChild, OutputStream toChild, PipeTransport.Settings settings,
                   Admission admission, ScheduledExecutorService timer, Consumer<PipeConnection> onEnd) {
        this.name = name;
        this.in = new DataInputStream(fromChild);
        this.out = toChild;
        this.settings = settings;
        this.admission = admission;
        this.timer = timer;
        this.onEnd = onEnd;
        this.protocol = new PeerProtocol(admission, link, "pipe", new Message.Welcome(Protocol.VERSION, 0,
                settings.maxFrameLength(), settings.dispatcherId()), this);
        this.writer = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "falkon-pipe-write-" + n);
            t.setDaemon(true);
            return t;
        });
        this.reader = new Thread(this::readAll, "falkon-pipe-read-" + n);
        reader.setDaemon(true);
    }

    /** The scheduler's side (for the link contract test). */
    BufferedLink link() {
        return link;
    }

    void start() {
        handshakeTimer = timer.schedule(this::handshakeTimedOut, settings.handshakeTimeoutMillis(),
                TimeUnit.MILLISECONDS);
        reader.start();
    }

    /** On the timer's thread: the protocol is the reader's, so the refusal is logged and written from here. */
    private void handshakeTimedOut() {
        if (!helloSeen) {
            String reason = "no HELLO within " + settings.handshakeTimeoutMillis() + " ms";
            admission.badRequests().refused("closing connection from " + name, ErrorCode.HANDSHAKE_TIMEOUT + " "
                    + reason);
            sendAndClose(Message.ErrorMessage.of(0, ErrorCode.HANDSHAKE_TIMEOUT, reason));
        }
    }

    private void readAll() {
        try {
            for (;;) {
                int n;
                try {
                    n = in.readInt();
                } catch (EOFException e) {
                    return; // the child closed its output: it has exited, or is exiting
                }
                if (n < 0 || n > settings.maxFrameLength()) { // n < 0: a u32 over 2^31
                    protocol.refuse(ErrorCode.FRAME_TOO_LARGE, "frame longer than the maximum of "
                            + settings.maxFrameLength() + " bytes");
                    return;
                }
                byte[] body = new byte[n];
                in.readFully(body);
                Message m;
                try {
                    m = MessageCodec.decode(Unpooled.wrappedBuffer(body));
                } catch (ProtocolException e) {
                    protocol.refuse(e.code(), e.getMessage());
                    return;
                } catch (RuntimeException e) {
                    log.error("closing connection from {} after an internal error", name, e);
                    protocol.refuse(ErrorCode.MALFORMED, "internal error in the dispatcher (see its log)");
                    return;
                }
                if (closing) {
                    continue; // the child is being told why its link closed, and is leaving
                }
                if (!helloSeen) {
                    helloSeen = true;
                    handshakeTimer.cancel(false);
                }
                protocol.received(m);
            }
        } catch (IOException e) {
            log.debug("connection from {} failed: {}", name, e.toString());
        } finally {
            handshakeTimer.cancel(false);
            protocol.ended();
            queueCloseOutput();
            writer.shutdown();
            onEnd.accept(this);
        }
    }

    private void write(List<Message> messages) {
        if (outputClosed) {
            return;
        }
        ByteBuf frames = Unpooled.buffer(256 * messages.size());
        try {
            for (int i = 0, n = messages.size(); i < n; i++) {
                MessageCodec.encodeFrame(messages.get(i), frames);
            }
            frames.getBytes(frames.readerIndex(), out, frames.readableBytes());
            out.flush();
        } catch (IOException e) {
            log.debug("writing to {} failed: {}", name, e.toString());
            closeOutput(); // the child has gone: the reader sees the end of its output and tells the scheduler
        } finally {
            frames.release();
        }
    }

    private void onWriter(Runnable r) {
        try {
            writer.execute(r);
        } catch (RejectedExecutionException e) {
            // the connection has ended: nothing more goes out
        }
    }

    /**
     * Queues the end of the child's input behind what is being written. One call site for the three
     * callers: each site of a method reference is linked on its first call, and a second site with the
     * same shape found no class in the archive and had one made at run time, at the run's exit
     * (docs/benchmarks.md, "an eighth pass").
     */
    private void queueCloseOutput() {
        onWriter(this::closeOutput);
    }

    private void closeOutput() {
        outputClosed = true;
        try {
            out.close();
        } catch (IOException e) {
            log.debug("closing the input of {}: {}", name, e.toString());
        }
    }

    @Override
    public void send(Message m) {
        onWriter(() -> write(List.of(m)));
    }

    /** The error, then the end of the child's input: it reads the one, then the other. */
    @Override
    public void sendAndClose(Message.ErrorMessage error) {
        onWriter(() -> {
            write(List.of(error));
            closeOutput();
        });
    }

    @Override
    public void close() {
        queueCloseOutput();
    }

    /**
     * The transport is closing: what is queued is written, the child's input ends, and this waits
     * (up to {@link #DRAIN_MILLIS} each) for the writes and for the child to end its output.
     */
    void closeAfterWrites() {
        queueCloseOutput();
        writer.shutdown();
        try {
            if (!writer.awaitTermination(DRAIN_MILLIS, TimeUnit.MILLISECONDS)) {
                log.warn("{} did not take what was written to it within {} ms", name, DRAIN_MILLIS);
            }
            if (reader.isAlive()) {
                reader.join(DRAIN_MILLIS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The scheduler's side of the connection. */
    private final class PipeLink extends BufferedLink {
        @Override
        protected void deliver(List<Message> batch) {
            onWriter(() -> write(batch));
        }

        @Override
        protected void closed(Message.ErrorMessage error) {
            closing = true;
            if (error == null) {
                PipeConnection.this.close();
            } else {
                sendAndClose(error);
            }
        }

        @Override
        public String remote() {
            return name;
        }

        /** Its peer is a process on this machine. */
        @Override
        public String remoteHost() {
            return "127.0.0.1";
        }

        @Override
        public String toString() {
            return "link " + name;
        }
    }
}
