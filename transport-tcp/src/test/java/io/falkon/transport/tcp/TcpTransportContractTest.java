package io.falkon.transport.tcp;

import io.falkon.dispatcher.admission.Admission;
import io.falkon.dispatcher.admission.ServerTransport;
import io.falkon.dispatcher.admission.ServerTransportContract;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Message;
import io.falkon.protocol.MessageCodec;
import io.falkon.protocol.Protocol;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;

import java.io.DataInputStream;
import java.net.InetSocketAddress;
import java.net.Socket;

import static org.assertj.core.api.Assertions.assertThat;

/** The TCP listener of the binary protocol against the server-transport contract. */
class TcpTransportContractTest extends ServerTransportContract {

    @Override
    protected ServerTransport bind(Admission admission, int port) {
        try {
            return TcpTransport.bind(new InetSocketAddress("127.0.0.1", port), 1,
                    new TcpTransport.Settings("d-contract", Protocol.DEFAULT_MAX_FRAME_LENGTH, 0, 0, 10_000, null),
                    admission);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    protected void assertRefusedWithoutTheToken(int port) throws Exception {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
            s.setSoTimeout(30_000);
            ByteBuf frame = Unpooled.buffer();
            MessageCodec.encodeFrame(Message.Hello.of(Protocol.ROLE_CLIENT, "not-the-token", "contract"), frame);
            s.getOutputStream().write(ByteBufUtil.getBytes(frame));
            frame.release();
            DataInputStream in = new DataInputStream(s.getInputStream());
            byte[] body = new byte[in.readInt()];
            in.readFully(body);
            Message answer = MessageCodec.decode(Unpooled.wrappedBuffer(body));
            assertThat(answer).isInstanceOf(Message.ErrorMessage.class);
            assertThat(((Message.ErrorMessage) answer).errorCode()).isEqualTo(ErrorCode.UNAUTHORIZED);
            assertThat(in.read()).isEqualTo(-1); // and the connection is closed
        }
    }
}
