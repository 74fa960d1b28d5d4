package io.falkon.protocol;

import io.falkon.protocol.netty.FrameDecoder;
import io.falkon.protocol.netty.FrameEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import java.time.Duration;

class MessageCodecTest {

    private static ByteBuf body(Message m) {
        ByteBuf b = Unpooled.buffer();
        MessageCodec.encode(m, b);
        return b;
    }

    @Test
    void everyVectorMessageSurvivesEveryTruncationWithAFieldNamingError() {
        for (GoldenVectors.Vector v : GoldenVectors.all()) {
            ByteBuf full = body(v.message());
            byte[] bytes = new byte[full.readableBytes()];
            full.readBytes(bytes);
            for (int cut = 0; cut < bytes.length; cut++) {
                ByteBuf truncated = Unpooled.wrappedBuffer(Arrays.copyOf(bytes, cut));
                assertThatThrownBy(() -> MessageCodec.decode(truncated)).as(v.name() + " cut at " + cut)
                        .isInstanceOf(ProtocolException.class)
                        .hasMessageContaining(cut == 0 ? "type" : v.message().type().name());
            }
        }
    }

    @Test
    void trailingBytesAreRejected() {
        ByteBuf b = body(new Message.Credit(3));
        b.writeByte(0);
        assertThatThrownBy(() -> MessageCodec.decode(b)).isInstanceOf(ProtocolException.class)
                .hasMessage("CREDIT: 1 unexpected trailing bytes");
    }

    @Test
    void unknownTypeAndBadMagicAreNamed() {
        assertThatThrownBy(() -> MessageCodec.decode(Unpooled.wrappedBuffer(new byte[]{(byte) 0x99})))
                .hasMessage("unknown message type 0x99");
        ByteBuf hello = body(new Message.Hello(0x12345678, 1, 1, "", "x"));
        assertThatThrownBy(() -> MessageCodec.decode(hello)).hasMessageContaining("HELLO.magic");
    }

    @Test
    void aHugeCountCannotMakeTheDecoderAllocate() {
        ByteBuf b = Unpooled.buffer();
        b.writeByte(MessageType.DISPATCH.code());
        b.writeInt(Integer.MAX_VALUE);
        assertThatThrownBy(() -> MessageCodec.decode(b)).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("DISPATCH.tasks: count 2147483647 cannot fit");
        ByteBuf c = Unpooled.buffer();
        c.writeByte(MessageType.CREDIT.code());
        c.writeInt(-1);
        assertThatThrownBy(() -> MessageCodec.decode(c)).hasMessageContaining("credits: 4294967295 is over 2^31-1");
    }

    @Test
    void errorsInsideBundlesNameTheElement() {
        ByteBuf b = Unpooled.buffer();
        b.writeByte(MessageType.RESULT.code());
        b.writeInt(1);          // credits
        b.writeInt(1);          // one result
        b.writeLong(9);         // taskId
        b.writeInt(0);          // attempt
        b.writeByte(77);        // bad status
        b.writeZero(60);
        assertThatThrownBy(() -> MessageCodec.decode(b))
                .hasMessage("RESULT.results[0].execution.status: unknown value 77");
    }

    @Test
    void validateAcceptsGoodSpecsAndNamesTheProblemInBadOnes() {
        assertThat(TaskSpecCodec.validate(TaskSpecCodec.encode(TaskSpec.shell("true")))).isNull();
        assertThat(TaskSpecCodec.validate(TaskSpecCodec.encode(
                TaskSpec.builder("x").env("A", "1").env("B", "2").build()))).isNull();

        ByteBuf empty = Unpooled.buffer();
        empty.writeInt(0);      // argv count
        empty.writeInt(0);      // env
        empty.writeInt(0);      // workDir
        empty.writeInt(0);      // wall time
        empty.writeShort(0);    // ext
        assertThat(TaskSpecCodec.validate(bytes(empty))).isEqualTo("argv is empty (a task needs a command)");

        ByteBuf emptyCmd = Unpooled.buffer();
        emptyCmd.writeInt(1).writeInt(0).writeInt(0).writeInt(0).writeInt(0).writeShort(0);
        assertThat(TaskSpecCodec.validate(bytes(emptyCmd))).isEqualTo("argv[0] (the command) is empty");

        ByteBuf dupEnv = Unpooled.buffer();
        dupEnv.writeInt(1).writeInt(1).writeByte('x');
        dupEnv.writeInt(2);
        for (int i = 0; i < 2; i++) {
            dupEnv.writeInt(1).writeByte('A').writeInt(1).writeByte('1');
        }
        dupEnv.writeInt(0).writeInt(0).writeShort(0);
        assertThat(TaskSpecCodec.validate(bytes(dupEnv))).isEqualTo("env[1] repeats a variable name");

        assertThat(TaskSpecCodec.validate(new byte[]{0, 0})).contains("argv: truncated");
        byte[] good = TaskSpecCodec.encode(TaskSpec.of("x"));
        assertThat(TaskSpecCodec.validate(Arrays.copyOf(good, good.length + 1))).contains("trailing");
    }

    private static byte[] bytes(ByteBuf b) {
        byte[] a = new byte[b.readableBytes()];
        b.readBytes(a);
        return a;
    }

    @Test
    void taskSpecRejectsBadFieldsUpFront() {
        assertThatThrownBy(() -> TaskSpec.of()).hasMessageContaining("argv is empty");
        assertThatThrownBy(() -> TaskSpec.of("")).hasMessageContaining("argv[0] (the command) is empty");
        assertThatThrownBy(() -> TaskSpec.builder("x").env("A=B", "1").build()).hasMessageContaining("A=B");
        assertThatThrownBy(() -> TaskSpec.builder("x").wallTime(Duration.ofDays(100)).build())
                .hasMessageContaining("out of range");
    }

    @Test
    void frameDecoderSplitsAStreamAndRefusesOversizedFramesWithoutBufferingThem() {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(64), FrameEncoder.INSTANCE);
        ByteBuf stream = Unpooled.buffer();
        MessageCodec.encodeFrame(new Message.Credit(1), stream);
        MessageCodec.encodeFrame(new Message.Heartbeat(5), stream);
        // deliver byte by byte: the decoder must reassemble frames
        while (stream.isReadable()) {
            ch.writeInbound(stream.readRetainedSlice(1));
        }
        Message first = ch.readInbound();
        assertThat(first).isEqualTo(new Message.Credit(1));
        Message second = ch.readInbound();
        assertThat(second).isEqualTo(new Message.Heartbeat(5));

        ByteBuf big = Unpooled.buffer();
        big.writeInt(65);       // one over the limit
        assertThatThrownBy(() -> ch.writeInbound(big)).isInstanceOf(TooLongFrameException.class);

        EmbeddedChannel out = new EmbeddedChannel(FrameEncoder.INSTANCE);
        out.writeOutbound(new Message.Cancel(new long[]{1, 2}));
        ByteBuf encoded = out.readOutbound();
        assertThat(encoded.readInt()).isEqualTo(1 + 4 + 16);
        encoded.release();
    }

    @Test
    void frameDecoderReportsMalformedBodies() {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(1024));
        ByteBuf b = Unpooled.buffer();
        b.writeInt(2).writeByte(MessageType.CREDIT.code()).writeByte(0);
        assertThatThrownBy(() -> ch.writeInbound(b)).isInstanceOf(DecoderException.class)
                .hasCauseInstanceOf(ProtocolException.class)
                .cause().hasMessageContaining("CREDIT.credits: truncated");
    }

    @Test
    void roundTripOfSpecsKeepsEveryField() {
        TaskSpec s = TaskSpec.builder(List.of("a", "b c", "")).env("K", "v=w").workDir("/w")
                .wallTime(Duration.ofSeconds(3)).ext(new ExtField(0x8000, new byte[]{9})).build();
        assertThat(TaskSpecCodec.decode(TaskSpecCodec.encode(s))).isEqualTo(s);
    }
}
