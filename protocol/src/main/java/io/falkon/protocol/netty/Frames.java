package io.falkon.protocol.netty;

import io.netty.channel.ChannelPipeline;

/** Installs the protocol's framing on a Netty pipeline. */
public final class Frames {
    private Frames() {
    }

    /** Adds the frame decoder and encoder; application handlers go after them. */
    public static void install(ChannelPipeline pipeline, int maxFrameLength) {
        pipeline.addLast("frameDecoder", new FrameDecoder(maxFrameLength));
        pipeline.addLast("frameEncoder", FrameEncoder.INSTANCE);
    }
}
