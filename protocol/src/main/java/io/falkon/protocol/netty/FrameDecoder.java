package io.falkon.protocol.netty;

import io.falkon.protocol.MessageCodec;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;

/**
 * Splits the byte stream into frames ({@code length:u32} prefix) and decodes each into a
 * {@link io.falkon.protocol.Message}. A length over the limit raises Netty's
 * {@link io.netty.handler.codec.TooLongFrameException} at once, without buffering the frame;
 * a malformed body raises {@link io.falkon.protocol.ProtocolException}.
 */
public final class FrameDecoder extends LengthFieldBasedFrameDecoder {

    /** One per connection (a decoder keeps what it has read); see {@link Frames}. */
    @Override
    public boolean isSharable() {
        return false;
    }

    /** @param maxFrameLength the largest allowed value of the length field */
    public FrameDecoder(int maxFrameLength) {
        // Netty's limit counts the 4-byte prefix too; the protocol's limit does not.
        super(maxFrameLength + 4, 0, 4, 0, 4, true);
    }

    @Override
    protected Object decode(ChannelHandlerContext ctx, ByteBuf in) throws Exception {
        ByteBuf frame = (ByteBuf) super.decode(ctx, in);
        if (frame == null) {
            return null;
        }
        try {
            return MessageCodec.decode(frame);
        } finally {
            frame.release();
        }
    }
}
