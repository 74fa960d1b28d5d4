package io.falkon.dispatcher;

import io.falkon.transport.ws.WsTransport;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import java.time.Duration;

/**
 * A WS Submit that times out in the gateway (the scheduler answered too late) may have been carried
 * out; the fault says so, and the caller's retry with the same ids queues nothing twice.
 */
class WsSubmitRetryTest {
    private static final String NS = "urn:falkon:ws:1";
    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> call(Dispatcher d, String op, String content) throws Exception {
        String body = "<s:Envelope xmlns:s='http://schemas.xmlsoap.org/soap/envelope/' xmlns:f='" + NS + "'><s:Body>"
                + "<f:" + op + ">" + content + "</f:" + op + "></s:Body></s:Envelope>";
        return http.send(HttpRequest.newBuilder(URI.create(d.wsUrl())).header("Content-Type", "text/xml")
                .header("SOAPAction", NS + ":" + op).header("Authorization", "Bearer " + d.token().value())
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String element(String xml, String name) {
        Matcher m = Pattern.compile("<(?:\\w+:)?" + name + ">([^<]*)</").matcher(xml);
        assertThat(m.find()).as("<%s> in %s", name, xml).isTrue();
        return m.group(1);
    }

    @Test
    void aSubmitRetriedAfterAGatewayTimeoutIsQueuedOnce() throws Exception {
        DispatcherConfig cfg = DispatcherConfig.local()
                .withWs(0, WsTransport.Settings.defaults().withTimeouts(30, 30, 1)); // replies wait 1 s at most
        try (Dispatcher d = Dispatcher.start(cfg)) {
            String key = element(call(d, "CreateInstance", "<f:leaseSeconds>60</f:leaseSeconds>").body(), "key");
            String submit = "<f:key>" + key + "</f:key>"
                    + "<f:task id='7'><f:command>/bin/true</f:command></f:task>"
                    + "<f:task id='8'><f:command>/bin/true</f:command></f:task>";
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch held = new CountDownLatch(1);
            d.loop().execute(() -> { // the scheduler thread is busy for longer than the gateway waits
                held.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
            HttpResponse<String> first = call(d, "Submit", submit);
            release.countDown();
            assertThat(first.statusCode()).isEqualTo(500);
            assertThat(element(first.body(), "faultstring")).contains("did not answer SUBMIT within 1 s")
                    .contains("sent again with the same task ids");
            // the first Submit was carried out once the scheduler got to it; the retry is answered, not queued
            HttpResponse<String> retry = call(d, "Submit", submit);
            assertThat(retry.statusCode()).as(retry.body()).isEqualTo(200);
            assertThat(retry.body()).contains("<f:accepted>2</f:accepted>").contains("<f:id>7</f:id><f:id>8</f:id>");
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> element(call(d, "GetStatus", "<f:key>" + key + "</f:key>").body(), "queued"),
                            q -> q.equals("2"));
        }
    }
}
