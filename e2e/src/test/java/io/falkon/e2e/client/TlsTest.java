package io.falkon.e2e.client;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.TaskResult;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.transport.ws.WsTransport;
import io.falkon.executor.Executor;
import io.falkon.executor.ExecutorConfig;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.tls.ThrowawayCertificates;
import io.falkon.protocol.tls.Tls;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * TLS end to end in one JVM: a dispatcher with a certificate from a throwaway CA on both its TCP
 * and WS (HTTPS) ports, an executor and clients that trust that CA; clients that speak plain text
 * or trust another CA get nothing through. (The executor processes, Java and C, are checked over
 * TLS by the executor contract in the cli module.)
 */
class TlsTest {
    @TempDir
    static Path dir;
    static ThrowawayCertificates.Pem pem;
    static Dispatcher dispatcher;
    static Executor executor;

    @BeforeAll
    static void start() throws Exception {
        pem = ThrowawayCertificates.generate(dir.resolve("pki"));
        dispatcher = Dispatcher.start(DispatcherConfig.local().withTls(Tls.server(pem.chain(), pem.key()))
                .withWs(0, WsTransport.Settings.defaults()));
        executor = Executor.start(ExecutorConfig.of("127.0.0.1", dispatcher.port()).withId("tls-exec").withSlots(2)
                .withToken(dispatcher.token()).withTls(Tls.client(pem.ca())));
        dispatcher.awaitExecutors(1, Duration.ofSeconds(30));
    }

    @AfterAll
    static void stop() {
        executor.close();
        dispatcher.close();
    }

    private static ClientOptions trusting(Path ca) {
        return ClientOptions.defaults().withToken(dispatcher.token()).withTls(Tls.client(ca))
                .withReconnectFor(Duration.ZERO);
    }

    @Test
    void aClientTrustingTheCaRunsTasksOverTcp() throws Exception {
        try (FalkonClient c = FalkonClient.connect("127.0.0.1:" + dispatcher.port(), trusting(pem.ca()))) {
            TaskResult r = c.createInstance("tls-tcp").submit(TaskSpec.of("/bin/echo", "over tls"))
                    .get(30, TimeUnit.SECONDS);
            assertThat(r.stdout()).isEqualTo("over tls\n");
        }
    }

    @Test
    void aClientTrustingTheCaRunsTasksOverHttps() throws Exception {
        assertThat(dispatcher.wsUrl()).startsWith("https://");
        try (FalkonClient c = FalkonClient.connect(dispatcher.wsUrl(), trusting(pem.ca()))) {
            TaskResult r = c.createInstance("tls-ws").submit(TaskSpec.of("/bin/echo", "over https"))
                    .get(30, TimeUnit.SECONDS);
            assertThat(r.stdout()).isEqualTo("over https\n");
        }
    }

    @Test
    void aClientTrustingAnotherCaIsRefusedOnBothPorts() throws Exception {
        Path otherCa = ThrowawayCertificates.generate(dir.resolve("other")).ca();
        assertThatThrownBy(() -> FalkonClient.connect("127.0.0.1:" + dispatcher.port(), trusting(otherCa))
                .createInstance("x")).hasMessageContaining("TLS handshake").hasMessageContaining("PKIX");
        assertThatThrownBy(() -> FalkonClient.connect(dispatcher.wsUrl(), trusting(otherCa)).createInstance("x"))
                .hasStackTraceContaining("PKIX");
    }

    @Test
    void aPlainTextClientGetsNothingThrough() throws Exception {
        ClientOptions plain = ClientOptions.defaults().withToken(dispatcher.token()).withReconnectFor(Duration.ZERO);
        assertThatThrownBy(() -> FalkonClient.connect("127.0.0.1:" + dispatcher.port(), plain).createInstance("x"))
                .hasMessageContaining("expects TLS");
        // and a plain HTTP request to the HTTPS port is not served: the TLS handshake fails and the
        // connection is closed without an HTTP answer
        URI ws = URI.create(dispatcher.wsUrl());
        try (Socket s = new Socket(ws.getHost(), ws.getPort())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST " + ws.getPath() + " HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String answer = new String(readAll(s.getInputStream()), StandardCharsets.ISO_8859_1);
            assertThat(answer).doesNotStartWith("HTTP/");
        }
        assertThat(dispatcher.status()).contains("\"registered\":1");
    }

    private static byte[] readAll(InputStream in) throws IOException {
        try {
            return in.readAllBytes();
        } catch (IOException reset) {
            return new byte[0]; // a reset is as good as a close here
        }
    }
}
