package io.falkon.protocol.session;

import io.falkon.protocol.Message;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.time.Clock;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * How long a session waits for its dispatcher is read from its clock, so a ten-minute deadline is
 * tested without ten minutes: the session dials a port where nothing listens (real sockets, one
 * millisecond between dials) with a clock on which every reading is a minute after the last, and
 * gives up at the first reading more than ten minutes after the first failure: the twelfth.
 */
class PeerSessionClockTest {
    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());

    @AfterEach
    void stop() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private static int closedPort() throws Exception {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            return s.getLocalPort(); // closed again: nothing listens there
        }
    }

    @Test
    void theFirstDialGivesUpWhenTheClockPassesItsDeadline() throws Exception {
        AtomicLong readings = new AtomicLong();
        Clock clock = () -> readings.incrementAndGet() * 60_000_000L; // a minute per reading
        CompletableFuture<String> gaveUp = new CompletableFuture<>();
        PeerSession.Config config = new PeerSession.Config("127.0.0.1", closedPort(), Protocol.ROLE_EXECUTOR, Token.none(),
                "test", null, Duration.ofSeconds(5), Duration.ofMinutes(10), new Backoff(1, 1),
                Duration.ofMinutes(10));
        PeerSession session = new PeerSession(config, group.next(), new PeerSession.Listener() {
            @Override
            public void welcomed(Channel channel, Message.Welcome welcome, boolean again) {
            }

            @Override
            public void received(Message m) {
            }

            @Override
            public void lost(String why) {
            }

            @Override
            public void refused(Message.ErrorMessage error) {
            }

            @Override
            public void gaveUp(String why) {
                gaveUp.complete(why);
            }
        }, clock);
        CompletableFuture<Message.Welcome> first = session.start();
        await().atMost(Duration.ofSeconds(30)).until(gaveUp::isDone);
        assertThat(gaveUp.get()).contains("cannot connect to dispatcher").contains("within 600 s");
        assertThat(first).isCompletedExceptionally();
        // the first failure read minute 1; minutes 2 to 11 were within the deadline; minute 12 was past it
        assertThat(readings.get()).isEqualTo(12);
        session.close();
    }
}
