package io.falkon.protocol.netty;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerAdapter;
import io.netty.channel.ChannelPipelineException;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The handlers answer {@code isSharable()} themselves (see {@link Frames}): each answer is what its
 * {@code @Sharable} annotation says, and Netty acts on it (a sharable one goes into two pipelines,
 * another does not).
 */
class SharableTest {

    @Test
    void eachHandlersAnswerIsItsAnnotations() {
        List<ChannelHandlerAdapter> handlers = List.of(new AcceptedChannels(), FrameEncoder.INSTANCE,
                new FrameDecoder(1024), new ConnectionLimit(new AtomicInteger(), 1, (who, why) -> { }, "test"));
        for (ChannelHandlerAdapter h : handlers) {
            assertEquals(h.getClass().isAnnotationPresent(ChannelHandler.Sharable.class), h.isSharable(),
                    h.getClass().getSimpleName());
        }
    }

    @Test
    void nettyTakesTheAnswer() {
        EmbeddedChannel one = new EmbeddedChannel();
        EmbeddedChannel two = new EmbeddedChannel();
        one.pipeline().addLast(FrameEncoder.INSTANCE);
        two.pipeline().addLast(FrameEncoder.INSTANCE); // sharable: in a second pipeline too
        FrameDecoder decoder = new FrameDecoder(1024);
        one.pipeline().addLast(decoder);
        assertThrows(ChannelPipelineException.class, () -> two.pipeline().addLast(decoder),
                "a decoder serves one connection");
        one.close();
        two.close();
    }
}
