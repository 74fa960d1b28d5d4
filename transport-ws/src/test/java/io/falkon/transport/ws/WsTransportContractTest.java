package io.falkon.transport.ws;

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

/** The Web Services interface (SOAP over HTTP) against the server-transport contract. */
class WsTransportContractTest extends ServerTransportContract {
    private WsTransport ws;

    @Override
    protected ServerTransport bind(Admission admission, int port) {
        ws = WsTransport.bind(new InetSocketAddress("127.0.0.1", port), admission, WsTransport.Settings.defaults(), null,
                null);
        return ws;
    }

    @Override
    protected void assertRefusedWithoutTheToken(int port) throws Exception {
        String envelope = "<s:Envelope xmlns:s='http://schemas.xmlsoap.org/soap/envelope/'><s:Body>"
                + "<f:CreateInstance xmlns:f='urn:falkon:ws:1'><f:clientName>x</f:clientName></f:CreateInstance>"
                + "</s:Body></s:Envelope>";
        HttpResponse<String> r = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build().send(
                HttpRequest.newBuilder(URI.create(ws.url())).timeout(Duration.ofSeconds(30))
                        .header("Content-Type", "text/xml").header("SOAPAction", "urn:falkon:ws:1:CreateInstance")
                        .header("Authorization", "Bearer not-the-token")
                        .POST(HttpRequest.BodyPublishers.ofString(envelope)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(401);
        assertThat(r.body()).contains("Fault");
    }
}
