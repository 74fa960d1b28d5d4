package io.falkon.dispatcher.admission;

import io.falkon.dispatcher.core.Journal;
import io.falkon.dispatcher.core.Scheduler;
import io.falkon.dispatcher.core.SchedulerConfig;
import io.falkon.dispatcher.core.SchedulerLoop;
import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.time.Clock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * What every listener in front of the admission stage promises (TCP, WS, the monitor), run against
 * each over real sockets on 127.0.0.1: it listens on the port it names; a peer without the
 * deployment's token is refused, and the refusal is logged by the admission stage; a port it cannot
 * take fails its bind with a reason; closing it ends the connections it holds and frees its port.
 */
public abstract class ServerTransportContract {
    protected static final String TOKEN = "the-deployment-token";

    private SchedulerLoop loop;
    protected Admission admission;
    private ServerTransport transport;

    /** This transport, listening on 127.0.0.1:{@code port} (0: any free port) in front of {@code admission}. */
    protected abstract ServerTransport bind(Admission admission, int port);

    /** A request on a new connection to {@code port} that presents no token or a wrong one is refused, as this transport refuses. */
    protected abstract void assertRefusedWithoutTheToken(int port) throws Exception;

    @BeforeEach
    void start() {
        loop = new SchedulerLoop(new Scheduler(new FirstAvailable(), Clock.SYSTEM, "d", SchedulerConfig.defaults(),
                Journal.NONE)).start();
        admission = new Admission(loop, Token.of(TOKEN), 1 << 20);
        transport = bind(admission, 0);
    }

    @AfterEach
    void stop() {
        if (transport != null) {
            transport.close();
        }
        loop.close();
    }

    @Test
    void itListensOnThePortItNames() throws Exception {
        assertThat(transport.name()).isNotBlank();
        assertThat(transport.port()).isPositive();
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", transport.port()), 10_000);
            assertThat(s.isConnected()).isTrue();
        }
    }

    @Test
    void aPeerWithoutTheTokenIsRefusedAndTheRefusalLogged() throws Exception {
        long before = admission.badRequests().total();
        assertRefusedWithoutTheToken(transport.port());
        await().atMost(Duration.ofSeconds(30)).until(() -> admission.badRequests().total() > before);
        assertThat(loop.failed()).isNotDone();
    }

    @Test
    void aPortInUseFailsTheBindWithAReason() throws Exception {
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress("127.0.0.1", 0));
            assertThatThrownBy(() -> bind(admission, taken.getLocalPort()).close())
                    .isInstanceOf(RuntimeException.class).hasMessageContaining("ddress");
        }
    }

    @Test
    void closingEndsTheConnectionsItHoldsAndFreesItsPort() throws Exception {
        int port = transport.port();
        try (Socket idle = new Socket()) {
            idle.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
            idle.setSoTimeout(30_000);
            transport.close();
            transport = null;
            InputStream in = idle.getInputStream();
            int read;
            try {
                do {
                    read = in.read(); // what the transport says as it closes (a refusal, an error), then the end
                } while (read >= 0);
            } catch (java.net.SocketException reset) {
                read = -1; // ended with a reset: ended all the same
            }
            assertThat(read).isEqualTo(-1);
        }
        transport = bind(admission, port);
        assertThat(transport.port()).isEqualTo(port);
    }
}
