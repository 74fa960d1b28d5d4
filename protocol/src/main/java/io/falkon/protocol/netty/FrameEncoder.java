package io.falkon.protocol.netty;

import io.falkon.protocol.Message;
import io.falkon.protocol.MessageCodec;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToByteEncoder;

/** Encodes a {@link Message} as one length-prefixed frame into a single buffer. */
@ChannelHandler.Sharable
public final class FrameEncoder extends MessageToByteEncoder<Message> {

    /** Sharable, as annotated; said here too: see {@link Frames}. */
    @Override
    public boolean isSharable() {
        return true;
    }
    public static final FrameEncoder INSTANCE = new FrameEncoder();

    private FrameEncoder() {
        super(Message.class);
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, Message msg, ByteBuf out) {
        MessageCodec.encodeFrame(msg, out);
    }
}
