package io.falkon.transport.monitor;

import io.falkon.dispatcher.admission.Admission;
import io.falkon.dispatcher.admission.ServerTransport;
import io.falkon.dispatcher.admission.ServerTransportContract;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The dashboard and /metrics listener against the server-transport contract. */
class MonitorTransportContractTest extends ServerTransportContract {

    @Override
    protected ServerTransport bind(Admission admission, int port) {
        return MonitorTransport.bind(new InetSocketAddress("127.0.0.1", port), admission,
                MonitorTransport.Settings.defaults(), null, null);
    }

    @Override
    protected void assertRefusedWithoutTheToken(int port) throws Exception {
        HttpResponse<String> r = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build().send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                        .timeout(Duration.ofSeconds(30)).header("Authorization", "Bearer not-the-token").GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(401);
        assertThat(r.headers().firstValue("WWW-Authenticate")).isPresent();
    }
}
