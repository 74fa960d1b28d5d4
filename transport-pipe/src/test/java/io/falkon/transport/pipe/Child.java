package io.falkon.transport.pipe;

import io.falkon.protocol.Message;
import io.falkon.protocol.MessageCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;

/**
 * The child's side of a pair of real pipes (the kernel's, through NIO): what a test writes as the
 * child goes to the dispatcher's reader, and what the dispatcher writes comes back here. Frames are
 * written and read with the protocol's own codec, or as raw bytes for the attacks.
 */
final class Child implements AutoCloseable {
    /** The dispatcher's ends: the child's output, read; the child's input, written. */
    final InputStream fromChild;
    final OutputStream toChild;
    private final DataInputStream in;
    private final OutputStream out;

    Child() throws IOException {
        Pipe down = Pipe.open(); // dispatcher -> child
        Pipe up = Pipe.open();   // child -> dispatcher
        this.fromChild = Channels.newInputStream(up.source());
        this.toChild = Channels.newOutputStream(down.sink());
        this.in = new DataInputStream(Channels.newInputStream(down.source()));
        this.out = Channels.newOutputStream(up.sink());
    }

    void send(Message m) throws IOException {
        ByteBuf b = Unpooled.buffer();
        MessageCodec.encodeFrame(m, b);
        raw(ByteBufUtil.getBytes(b));
        b.release();
    }

    void raw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** The next frame from the dispatcher, or null at the end of the child's input. */
    Message read() throws IOException {
        int n;
        try {
            n = in.readInt();
        } catch (EOFException e) {
            return null;
        }
        byte[] body = new byte[n];
        in.readFully(body);
        return MessageCodec.decode(Unpooled.wrappedBuffer(body));
    }

    /** The child exits: its output ends. */
    void exit() throws IOException {
        out.close();
    }

    @Override
    public void close() throws IOException {
        out.close();
        in.close();
    }
}
