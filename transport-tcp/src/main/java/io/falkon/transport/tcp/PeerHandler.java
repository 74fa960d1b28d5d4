package io.falkon.transport.tcp;

import io.falkon.dispatcher.admission.Admission;
import io.falkon.dispatcher.admission.PeerProtocol;
import io.falkon.protocol.ErrorCode;
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
 * One TCP connection on the dispatcher: Netty's side of it (the handshake timer, heartbeats and idle
 * connections, decoding failures) around the transport-independent {@link PeerProtocol}, which holds
 * the handshake and hands every other message to the {@link Admission} stage. Anything that breaks
 * the protocol closes this connection only, with an ERROR naming the reason (logged once,
 * rate-limited).
 */
final class PeerHandler extends ChannelInboundHandlerAdapter {

    /** One per connection; see {@link io.falkon.protocol.netty.Frames}. */
    @Override
    public boolean isSharable() {
        return false;
    }
    private static final Logger log = LoggerFactory.getLogger(PeerHandler.class);

    private final TcpTransport.Settings settings;
    private final Admission admission;
    private NettyLink link;
    private PeerProtocol protocol;
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
        protocol = new PeerProtocol(admission, link, "tcp", new Message.Welcome(Protocol.VERSION,
                settings.heartbeatMillis(), settings.maxFrameLength(), settings.dispatcherId()), new PeerProtocol.Wire() {
                    @Override
                    public void send(Message m) {
                        ctx.writeAndFlush(m, ctx.voidPromise());
                    }

                    @Override
                    public void sendAndClose(Message.ErrorMessage error) {
                        if (ctx.channel().isActive()) {
                            ctx.writeAndFlush(error).addListener(ChannelFutureListener.CLOSE);
                        }
                    }

                    @Override
                    public void close() {
                        ctx.close();
                    }
                });
        handshakeTimer = ctx.executor().schedule(() -> protocol.refuse(ErrorCode.HANDSHAKE_TIMEOUT,
                "no HELLO within " + settings.handshakeTimeoutMillis() + " ms"),
                settings.handshakeTimeoutMillis(), TimeUnit.MILLISECONDS);
        super.channelActive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (link.closing()) {
            return; // the scheduler closed the link: the peer is being told why and is leaving
        }
        if (protocol.awaitingHello()) {
            handshakeTimer.cancel(false);
        }
        protocol.received((Message) msg);
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
                case READER_IDLE -> protocol.refuse(ErrorCode.UNEXPECTED_MESSAGE,
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
            protocol.refuse(ErrorCode.FRAME_TOO_LARGE,
                    "frame longer than the maximum of " + settings.maxFrameLength() + " bytes");
        } else if (c instanceof ProtocolException p) {
            protocol.refuse(p.code(), p.getMessage());
        } else if (c instanceof NotSslRecordException || c instanceof SSLException) {
            // a plain-text peer on a TLS port, or a failed handshake: nothing can be said to it in clear
            admission.badRequests().refused("closing connection from " + ctx.channel().remoteAddress(),
                    "TLS: " + c.getMessage());
            protocol.close();
        } else if (c instanceof IOException) {
            log.debug("connection from {} failed: {}", ctx.channel().remoteAddress(), c.toString());
            protocol.close();
        } else if (c instanceof VirtualMachineError) {
            // out of memory: the JVM exits (-XX:+ExitOnOutOfMemoryError); nothing useful can go to the peer
            protocol.close();
        } else {
            log.error("closing connection from {} after an internal error", ctx.channel().remoteAddress(), c);
            protocol.refuse(ErrorCode.MALFORMED, "internal error in the dispatcher (see its log)");
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (handshakeTimer != null) {
            handshakeTimer.cancel(false);
        }
        if (protocol != null) {
            protocol.ended();
        }
        super.channelInactive(ctx);
    }
}
