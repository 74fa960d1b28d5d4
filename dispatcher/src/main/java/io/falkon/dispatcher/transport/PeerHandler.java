package io.falkon.dispatcher.transport;

import io.falkon.dispatcher.core.Scheduler;
import io.falkon.dispatcher.core.SchedulerLoop;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Message;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.ProtocolException;
import io.falkon.protocol.TaskSpecCodec;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.timeout.IdleStateEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One connection's protocol state on the dispatcher: the handshake, the role, and the
 * translation of decoded messages into {@link Scheduler} events (run on the {@link SchedulerLoop}).
 * Anything that breaks the protocol closes this connection only, with an ERROR naming the reason.
 */
final class PeerHandler extends ChannelInboundHandlerAdapter {
    private static final Logger log = LoggerFactory.getLogger(PeerHandler.class);

    private enum State { AWAIT_HELLO, AWAIT_REGISTER, EXECUTOR, CLIENT, CLOSED }

    private final TcpTransport.Settings settings;
    private final SchedulerLoop loop;
    private final Scheduler scheduler;
    private NettyLink link;
    private State state = State.AWAIT_HELLO;
    private boolean registered;
    private boolean client;
    private ScheduledFuture<?> handshakeTimer;

    PeerHandler(TcpTransport.Settings settings, SchedulerLoop loop) {
        this.settings = settings;
        this.loop = loop;
        this.scheduler = loop.scheduler();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        link = new NettyLink(ctx.channel());
        handshakeTimer = ctx.executor().schedule(() -> protocolError(ctx, ErrorCode.HANDSHAKE_TIMEOUT,
                "no HELLO within " + settings.handshakeTimeoutMillis() + " ms"),
                settings.handshakeTimeoutMillis(), TimeUnit.MILLISECONDS);
        super.channelActive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        Message m = (Message) msg;
        switch (state) {
            case AWAIT_HELLO -> hello(ctx, m);
            case AWAIT_REGISTER -> {
                if (m instanceof Message.Register reg) {
                    state = State.EXECUTOR;
                    registered = true;
                    loop.execute(() -> scheduler.registerExecutor(link, reg));
                } else if (!(m instanceof Message.Heartbeat)) {
                    unexpected(ctx, m, "REGISTER");
                }
            }
            case EXECUTOR -> executorMessage(ctx, m);
            case CLIENT -> clientMessage(ctx, m);
            case CLOSED -> {
                // ignore what arrives while closing
            }
        }
    }

    private void hello(ChannelHandlerContext ctx, Message m) {
        if (!(m instanceof Message.Hello h)) {
            unexpected(ctx, m, "HELLO");
            return;
        }
        handshakeTimer.cancel(false);
        if (h.version() != Protocol.VERSION) {
            protocolError(ctx, ErrorCode.UNSUPPORTED_VERSION,
                    "protocol version " + h.version() + " is not supported (this dispatcher speaks "
                            + Protocol.VERSION + ")");
            return;
        }
        if (!settings.token().equals(h.token())) {
            protocolError(ctx, ErrorCode.UNAUTHORIZED, h.token().isEmpty() ? "a token is required" : "wrong token");
            return;
        }
        if (h.role() == Protocol.ROLE_EXECUTOR) {
            state = State.AWAIT_REGISTER;
        } else if (h.role() == Protocol.ROLE_CLIENT) {
            state = State.CLIENT;
            client = true;
        } else {
            protocolError(ctx, ErrorCode.MALFORMED, "HELLO.role: unknown role " + h.role());
            return;
        }
        ctx.writeAndFlush(new Message.Welcome(Protocol.VERSION, settings.heartbeatMillis(),
                settings.maxFrameLength(), scheduler.dispatcherId()), ctx.voidPromise());
    }

    private void executorMessage(ChannelHandlerContext ctx, Message m) {
        switch (m.type()) {
            case RESULT -> {
                Message.Result r = (Message.Result) m;
                loop.execute(() -> scheduler.results(link, r));
            }
            case CREDIT -> {
                int credits = ((Message.Credit) m).credits();
                loop.execute(() -> scheduler.credit(link, credits));
            }
            case CACHE_UPDATE -> {
                Message.CacheUpdate u = (Message.CacheUpdate) m;
                loop.execute(() -> scheduler.cacheUpdate(link, u));
            }
            case HEARTBEAT -> {
                // the read itself keeps the connection alive
            }
            case ERROR -> {
                Message.ErrorMessage e = (Message.ErrorMessage) m;
                log.warn("executor at {} reported error {}: {}", link.remote(), e.errorCode(), printable(e.message()));
                if (e.errorCode().closesConnection()) {
                    close(ctx);
                }
            }
            default -> unexpected(ctx, m, "RESULT, CREDIT or HEARTBEAT");
        }
    }

    private void clientMessage(ChannelHandlerContext ctx, Message m) {
        switch (m.type()) {
            case SUBMIT -> submit((Message.Submit) m);
            case CREATE_INSTANCE -> {
                Message.CreateInstance c = (Message.CreateInstance) m;
                loop.execute(() -> scheduler.createInstance(link, c));
            }
            case STATUS_REQUEST -> {
                Message.StatusRequest s = (Message.StatusRequest) m;
                loop.execute(() -> scheduler.status(link, s));
            }
            case DESTROY -> {
                Message.Destroy d = (Message.Destroy) m;
                loop.execute(() -> scheduler.destroy(link, d));
            }
            case ATTACH -> {
                Message.Attach a = (Message.Attach) m;
                loop.execute(() -> scheduler.attach(link, a));
            }
            case ACK -> {
                Message.Ack a = (Message.Ack) m;
                loop.execute(() -> scheduler.ack(link, a));
            }
            case HEARTBEAT -> {
                // keeps the connection alive
            }
            case ERROR -> {
                Message.ErrorMessage e = (Message.ErrorMessage) m;
                log.warn("client at {} reported error {}: {}", link.remote(), e.errorCode(), printable(e.message()));
                if (e.errorCode().closesConnection()) {
                    close(ctx);
                }
            }
            default -> unexpected(ctx, m, "a client request");
        }
    }

    /** Validates every spec here, on the I/O thread, so the scheduler thread never has to. */
    private void submit(Message.Submit s) {
        List<Message.SubmittedTask> tasks = s.tasks();
        TaskSpecCodec.Scan[] scans = new TaskSpecCodec.Scan[tasks.size()];
        for (int i = 0, n = tasks.size(); i < n; i++) {
            scans[i] = TaskSpecCodec.scan(tasks.get(i).spec());
            if (!scans[i].valid()) {
                String reason = "task " + i + " of the bundle (clientTaskId "
                        + Long.toUnsignedString(tasks.get(i).clientTaskId()) + "): " + scans[i].problem()
                        + "; nothing of this bundle was queued";
                loop.execute(() -> scheduler.rejectRequest(link, s.requestId(), ErrorCode.INVALID_TASK, reason));
                return;
            }
        }
        loop.execute(() -> scheduler.submit(link, s, scans));
    }

    /** A peer's text, safe to log: control characters escaped, at most 200 characters. */
    static String printable(String s) {
        StringBuilder b = new StringBuilder(Math.min(s.length(), 200) + 8);
        for (int i = 0; i < s.length() && b.length() < 200; i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7f || c == '\ufffd') {
                b.append(String.format("\\x%02x", (int) c & 0xff));
            } else {
                b.append(c);
            }
        }
        if (s.length() > 200) {
            b.append("...");
        }
        return b.toString();
    }

    private void unexpected(ChannelHandlerContext ctx, Message m, String expected) {
        protocolError(ctx, ErrorCode.UNEXPECTED_MESSAGE,
                m.type() + " is not allowed here (expected " + expected + ")");
    }

    private void protocolError(ChannelHandlerContext ctx, ErrorCode code, String reason) {
        if (state == State.CLOSED) {
            return;
        }
        log.warn("closing connection from {}: {} {}", ctx.channel().remoteAddress(), code, reason);
        state = State.CLOSED;
        if (ctx.channel().isActive()) {
            ctx.writeAndFlush(Message.ErrorMessage.of(0, code, reason)).addListener(ChannelFutureListener.CLOSE);
        }
    }

    private void close(ChannelHandlerContext ctx) {
        state = State.CLOSED;
        ctx.close();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent idle) {
            switch (idle.state()) {
                case WRITER_IDLE -> ctx.writeAndFlush(new Message.Heartbeat(System.currentTimeMillis() * 1000),
                        ctx.voidPromise());
                case READER_IDLE -> {
                    // while we hold reading off (memory backpressure) the peer's heartbeats wait unread in
                    // the socket: the silence is ours, not a sign that the peer is gone
                    if (ctx.channel().config().isAutoRead()) {
                        protocolError(ctx, ErrorCode.UNEXPECTED_MESSAGE,
                                "nothing received for " + settings.deadAfterMillis() + " ms (heartbeats missed)");
                    }
                }
                default -> {
                }
            }
            return;
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable c = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (c instanceof TooLongFrameException) {
            protocolError(ctx, ErrorCode.FRAME_TOO_LARGE,
                    "frame longer than the maximum of " + settings.maxFrameLength() + " bytes");
        } else if (c instanceof ProtocolException p) {
            protocolError(ctx, p.code(), p.getMessage());
        } else if (c instanceof IOException) {
            log.debug("connection from {} failed: {}", ctx.channel().remoteAddress(), c.toString());
            close(ctx);
        } else {
            log.warn("closing connection from {} after an internal error", ctx.channel().remoteAddress(), c);
            protocolError(ctx, ErrorCode.MALFORMED, "internal error: " + c);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (handshakeTimer != null) {
            handshakeTimer.cancel(false);
        }
        state = State.CLOSED;
        if (registered) {
            loop.execute(() -> scheduler.executorDisconnected(link));
        } else if (client) {
            loop.execute(() -> scheduler.clientDisconnected(link));
        }
        super.channelInactive(ctx);
    }
}
