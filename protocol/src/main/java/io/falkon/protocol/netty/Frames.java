package io.falkon.protocol.netty;

import io.netty.channel.ChannelPipeline;

/**
 * Installs the protocol's framing on a Netty pipeline.
 *
 * <p>Each of Falkon's Netty handlers says whether it is sharable by overriding
 * {@code isSharable()}, not only by its {@code @Sharable} annotation: Netty asks every handler
 * added to a pipeline, and its default answer reads the class's annotations, which makes the JDK
 * generate a proxy class for the annotation type: about 5 ms (paired median) of code interpreted on the
 * thread that starts a dispatcher, in every short {@code falkon run} (docs/benchmarks.md, "The
 * last places a peer is faster (issue 58): a third pass").
 */
public final class Frames {
    private Frames() {
    }

    /** Adds the frame decoder and encoder; application handlers go after them. */
    public static void install(ChannelPipeline pipeline, int maxFrameLength) {
        pipeline.addLast("frameDecoder", new FrameDecoder(maxFrameLength));
        pipeline.addLast("frameEncoder", FrameEncoder.INSTANCE);
    }
}
