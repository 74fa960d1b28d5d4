package io.falkon.transport.tcp;

import io.falkon.dispatcher.admission.Admission;
import io.falkon.dispatcher.admission.Caller;
import io.falkon.dispatcher.admission.Role;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.LogSafe;
import io.falkon.protocol.Message;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.ProtocolException;
import io.falkon.protocol.time.Clock;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.group.ChannelGroup;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.timeout.IdleStateEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;

/**
 * One connection's protocol state on the dispatcher: the handshake, the connection-level messages
 * (HEARTBEAT, a peer's ERROR), and the hand-over of every other decoded message to the
 * {@link Admission} stage, which authenticates the peer, checks what its role may send, and
 * validates on the way to the scheduler. Anything that breaks the protocol closes this connection
 * only, with an ERROR naming the reason (logged once, rate-limited).
 */
final class PeerHandler extends ChannelInboundHandlerAdapter {

    /** One per connection; see {@link io.falkon.protocol.netty.Frames}. */
    @Override
    public boolean isSharable() {
        return false;
    }
    private static final Logger log = LoggerFactory.getLogger(PeerHandler.class);

    private enum State { AWAIT_HELLO, OPEN, CLOSED }

    private final TcpTransport.Settings settings;
    private final Admission admission;
    private NettyLink link;
    private Caller caller;
    private State state = State.AWAIT_HELLO;
    private ScheduledFuture<?> handshakeTimer;

    private final ChannelGroup leaving;

    PeerHandler(TcpTransport.Settings settings, Admission admission, ChannelGroup leaving) {
        this.settings = settings;
        this.admission = admission;
        this.leaving = leaving;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        link = new NettyLink(ctx.channel(), leaving);
        handshakeTimer = ctx.executor().schedule(() -> protocolError(ctx, ErrorCode.HANDSHAKE_TIMEOUT,
                "no HELLO within " + settings.handshakeTimeoutMillis() + " ms"),
                settings.handshakeTimeoutMillis(), TimeUnit.MILLISECONDS);
        super.channelActive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        Message m = (Message) msg;
        if (link.closing()) {
            return; // the scheduler closed the link: the peer is being told why and is leaving
        }
        switch (state) {
            case AWAIT_HELLO -> hello(ctx, m);
            case OPEN -> message(ctx, m);
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
        Role role;
        if (h.role() == Protocol.ROLE_EXECUTOR) {
            role = Role.EXECUTOR;
        } else if (h.role() == Protocol.ROLE_CLIENT) {
            role = Role.CLIENT;
        } else {
            protocolError(ctx, ErrorCode.MALFORMED, "HELLO.role: unknown role " + h.role());
            return;
        }
        caller = admission.authenticate(link, "tcp", role, h.token());
        if (caller == null) {
            protocolError(ctx, ErrorCode.UNAUTHORIZED, h.token().isEmpty()
                    ? "a token is required (--token-file, $FALKON_TOKEN, or ~/.falkon/token of the dispatcher's user)"
                    : "wrong token");
            return;
        }
        state = State.OPEN;
        ctx.writeAndFlush(new Message.Welcome(Protocol.VERSION, settings.heartbeatMillis(),
                settings.maxFrameLength(), settings.dispatcherId()), ctx.voidPromise());
    }

    private void message(ChannelHandlerContext ctx, Message m) {
        switch (m.type()) {
            case HEARTBEAT -> {
                // the read itself keeps the connection alive
            }
            case ERROR -> peerError(ctx, (Message.ErrorMessage) m);
            default -> {
                String refused = admission.accept(caller, m);
                if (refused != null) {
                    protocolError(ctx, ErrorCode.UNEXPECTED_MESSAGE, refused);
                }
            }
        }
    }

    private void peerError(ChannelHandlerContext ctx, Message.ErrorMessage e) {
        admission.badRequests().refused(caller.role().noun() + " at " + link.remote(), "reported error "
                + e.errorCode() + ": " + LogSafe.text(e.message()));
        if (e.errorCode().closesConnection()) {
            close(ctx);
        }
    }

    private void unexpected(ChannelHandlerContext ctx, Message m, String expected) {
        protocolError(ctx, ErrorCode.UNEXPECTED_MESSAGE,
                m.type() + " is not allowed here (expected " + expected + ")");
    }

    private void protocolError(ChannelHandlerContext ctx, ErrorCode code, String reason) {
        if (state == State.CLOSED) {
            return;
        }
        admission.badRequests().refused("closing connection from " + ctx.channel().remoteAddress(), code + " " + reason);
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
            if (link.closing()) {
                return; // our output has ended; the link closes within NettyLink.LEAVE_MILLIS anyway
            }
            switch (idle.state()) {
                case WRITER_IDLE -> ctx.writeAndFlush(new Message.Heartbeat(Clock.SYSTEM.nowMicros()),
                        ctx.voidPromise());
                case READER_IDLE -> protocolError(ctx, ErrorCode.UNEXPECTED_MESSAGE,
                        "nothing received for " + settings.deadAfterMillis() + " ms (heartbeats missed)");
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
        } else if (c instanceof NotSslRecordException || c instanceof SSLException) {
            // a plain-text peer on a TLS port, or a failed handshake: nothing can be said to it in clear
            admission.badRequests().refused("closing connection from " + ctx.channel().remoteAddress(),
                    "TLS: " + c.getMessage());
            close(ctx);
        } else if (c instanceof IOException) {
            log.debug("connection from {} failed: {}", ctx.channel().remoteAddress(), c.toString());
            close(ctx);
        } else if (c instanceof VirtualMachineError) {
            // out of memory: the JVM exits (-XX:+ExitOnOutOfMemoryError); nothing useful can go to the peer
            close(ctx);
        } else {
            log.error("closing connection from {} after an internal error", ctx.channel().remoteAddress(), c);
            protocolError(ctx, ErrorCode.MALFORMED, "internal error in the dispatcher (see its log)");
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (handshakeTimer != null) {
            handshakeTimer.cancel(false);
        }
        state = State.CLOSED;
        if (caller != null) {
            admission.gone(caller);
        }
        super.channelInactive(ctx);
    }
}
