package io.falkon.e2e.client;

import io.falkon.protocol.Message;
import io.falkon.protocol.MessageCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;

/** A hand-driven protocol peer on a plain socket, for sending malformed or hostile input. */
final class RawPeer implements AutoCloseable {
    final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;

    RawPeer(int port) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(10_000);
        in = new DataInputStream(socket.getInputStream());
        out = socket.getOutputStream();
    }

    void sendBytes(byte[] b) throws IOException {
        out.write(b);
        out.flush();
    }

    void send(Message m) throws IOException {
        ByteBuf buf = Unpooled.buffer();
        MessageCodec.encodeFrame(m, buf);
        byte[] b = new byte[buf.readableBytes()];
        buf.readBytes(b);
        sendBytes(b);
    }

    /** The next frame, decoded. */
    Message read() throws IOException {
        int len = in.readInt();
        byte[] body = new byte[len];
        in.readFully(body);
        return MessageCodec.decode(Unpooled.wrappedBuffer(body));
    }

    /** Whether the dispatcher has closed the connection (reads EOF within the socket timeout). */
    boolean closedByPeer() throws IOException {
        return closedByPeer(10_000);
    }

    boolean closedByPeer(int timeoutMillis) throws IOException {
        socket.setSoTimeout(timeoutMillis);
        try {
            return in.read() < 0;
        } catch (EOFException e) {
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
