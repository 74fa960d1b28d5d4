package io.falkon.e2e.wire;

import io.falkon.client.ConnectionLostException;
import io.falkon.client.FalkonException;
import io.falkon.client.Connection;

import io.falkon.transport.inprocess.InProcessConnection;
import io.falkon.transport.inprocess.InProcessTransport;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Message;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The connection contract within one process (no socket: messages pass as objects), and how such a
 * connection ends: the client's close is the dispatcher's lost client, the dispatcher's stop is the
 * client's lost connection.
 */
class InProcessConnectionTest extends ConnectionContract {
    private static InProcessTransport transport;

    @Override
    protected Connection connect() {
        if (transport == null) { // one per dispatcher: the contract's is started before the first test
            transport = plugInto(dispatcher);
        }
        return transport.connect();
    }

    @AfterAll
    static void forget() {
        transport = null;
    }

    static InProcessTransport plugInto(Dispatcher d) {
        return d.add(admission -> new InProcessTransport(admission, d.config().maxFrameLength()));
    }

    static InProcessConnection open(Dispatcher d) {
        return plugInto(d).connect();
    }

    @Test
    void theClientsCloseEndsItsInstancesAsALostConnectionWould() throws Exception {
        try (Dispatcher own = Dispatcher.start(DispatcherConfig.local())) {
            InProcessConnection c = open(own);
            c.createInstance("no lease", 0).get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(30)).until(() -> own.status().contains("\"instances\":1,"));
            c.close();
            await().atMost(Duration.ofSeconds(30)).until(() -> own.status().contains("\"instances\":0,"));
        }
    }

    @Test
    void aStoppingDispatcherTellsTheClientItsConnectionEnded() throws Exception {
        Dispatcher own = Dispatcher.start(DispatcherConfig.local());
        try (InProcessConnection c = open(own)) {
            Message.InstanceCreated created = c.createInstance("stopping", 60).get(30, TimeUnit.SECONDS);
            Sink sink = new Sink();
            c.route(created.instanceId(), sink);
            own.close();
            await().atMost(Duration.ofSeconds(30)).until(() -> !sink.threads.isEmpty());
            assertThat(c.connected()).isFalse();
            assertThatThrownBy(() -> c.status(0).get(30, TimeUnit.SECONDS)).cause()
                    .isInstanceOf(FalkonException.class)
                    .satisfies(e -> assertThat(((FalkonException) e).code()).isEqualTo(ErrorCode.SHUTTING_DOWN));
        } finally {
            own.close();
        }
    }

    @Test
    void aTransportAddedToAStoppedDispatcherIsClosedAtOnce() {
        Dispatcher own = Dispatcher.start(DispatcherConfig.local());
        own.close();
        try (InProcessConnection c = open(own)) {
            await().atMost(Duration.ofSeconds(30)).until(() -> !c.connected()); // told on its own thread
            assertThatThrownBy(() -> c.status(0).get(30, TimeUnit.SECONDS)).cause()
                    .isInstanceOf(FalkonException.class)
                    .satisfies(e -> assertThat(((FalkonException) e).code()).isEqualTo(ErrorCode.SHUTTING_DOWN));
        }
    }

    @Test
    void aConnectionLostIsNotAShutdownWhenTheClientClosesFirst() {
        connection.close();
        assertThatThrownBy(() -> connection.status(0).get(30, TimeUnit.SECONDS)).cause()
                .isInstanceOf(ConnectionLostException.class);
    }
}
