package io.falkon.e2e.client;

import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.GoldenVectors;
import io.falkon.protocol.Message;
import io.falkon.protocol.MessageCodec;
import io.falkon.protocol.Protocol;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A dispatcher that stops for good tells its executors so (ERROR SHUTTING_DOWN) and lets them read
 * it, even one that is writing when the notice comes: the test plays such an executor over a plain
 * socket, writing heartbeats without pause and looking at what has arrived only between writes.
 * Had the dispatcher closed with those heartbeats unread, the kernel would reset the connection and
 * the next write would fail before the notice was read (the real executors then dialled a stopped
 * dispatcher again for minutes).
 */
class ShutdownNoticeTest {
    static final String TOKEN = "shutdown-notice-token";
    static final byte[] HELLO = GoldenVectors.frame(Message.Hello.of(Protocol.ROLE_EXECUTOR, TOKEN, "notice"));
    static final byte[] REGISTER = GoldenVectors.frame(new Message.Register("busy", "busy", 1, 0, Map.of()));
    static final byte[] HEARTBEAT = GoldenVectors.frame(new Message.Heartbeat(1));

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES) // a hang guard only: the loop below ends on the notice
    void anExecutorWritingWhenTheDispatcherStopsReadsTheNoticeAndThenTheEndOfTheStream() throws Exception {
        Dispatcher d = Dispatcher.start(DispatcherConfig.local().withToken(TOKEN));
        CompletableFuture<Void> stopped;
        try (Socket s = new Socket("127.0.0.1", d.port())) {
            DataInputStream in = new DataInputStream(s.getInputStream());
            OutputStream out = s.getOutputStream();
            out.write(HELLO);
            assertThat(next(in)).isInstanceOf(Message.Welcome.class);
            out.write(REGISTER);
            d.awaitExecutors(1, Duration.ofSeconds(60));
            stopped = CompletableFuture.runAsync(d::close);
            Message.ErrorMessage notice = null;
            long heartbeats = 0;
            while (notice == null) {
                out.write(HEARTBEAT); // a reset would throw here
                heartbeats++;
                while (notice == null && in.available() > 0) {
                    if (next(in) instanceof Message.ErrorMessage e) {
                        notice = e;
                    }
                }
            }
            assertThat(notice.errorCode()).as("after %d heartbeats", heartbeats)
                    .isEqualTo(ErrorCode.SHUTTING_DOWN);
            assertThat(in.read()).as("the end of the stream after the notice").isEqualTo(-1);
        }
        stopped.get(60, TimeUnit.SECONDS); // the dispatcher's close ends once the executor has gone
    }

    private static Message next(DataInputStream in) throws IOException {
        byte[] body = new byte[in.readInt()];
        in.readFully(body);
        return MessageCodec.decode(Unpooled.wrappedBuffer(body));
    }
}
