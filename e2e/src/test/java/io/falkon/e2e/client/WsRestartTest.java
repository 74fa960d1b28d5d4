package io.falkon.e2e.client;

import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.dispatcher.journal.FsyncPolicy;
import io.falkon.e2e.Ports;
import io.falkon.transport.ws.WsTransport;
import io.falkon.executor.Executor;
import io.falkon.executor.ExecutorConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WS instance is a scheduler client like any other: with a journal it survives a dispatcher
 * restart, its key stays valid, its unfinished tasks run, and every result is fetched exactly once
 * (with {@code ack}, results not yet acknowledged when the dispatcher stopped come again).
 */
class WsRestartTest {
    private static final String NS = "urn:falkon:ws:1";
    private static final String TOKEN = "ws-restart-token";
    private static final Pattern RESULT = Pattern.compile("<f:result id=\"(\\d+)\" seq=\"(\\d+)\"[^>]*status=\"(\\w+)\"");
    private final HttpClient http = HttpClient.newHttpClient();

    @TempDir
    Path journal;

    private String call(String url, String op, String content) throws Exception {
        String body = "<s:Envelope xmlns:s='http://schemas.xmlsoap.org/soap/envelope/' xmlns:f='" + NS + "'><s:Body>"
                + "<f:" + op + ">" + content + "</f:" + op + "></s:Body></s:Envelope>";
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).header("Content-Type", "text/xml")
                .header("SOAPAction", NS + ":" + op).header("Authorization", "Bearer " + TOKEN)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return r.body();
    }

    private static int freePort() throws Exception {
        return Ports.free(); // the dispatcher binds it again after its restart: not the kernel's to hand out
    }

    /** Fetches with ack until nothing is outstanding or {@code until} results are in; returns the last seq. */
    private long fetch(String url, String key, long ack, Map<Long, Integer> seen, int until) throws Exception {
        while (seen.size() < until) {
            String r = call(url, "GetResults", "<f:key>" + key + "</f:key><f:waitSeconds>5</f:waitSeconds><f:ack>"
                    + ack + "</f:ack>");
            Matcher m = RESULT.matcher(r);
            while (m.find()) {
                assertThat(m.group(3)).isEqualTo("EXITED");
                long seq = Long.parseLong(m.group(2));
                if (seq > ack) { // a result acknowledged before never comes again
                    seen.merge(Long.parseLong(m.group(1)), 1, Integer::sum);
                    ack = seq;
                }
            }
            if (r.contains("<f:outstanding>0</f:outstanding>")) {
                break;
            }
        }
        return ack;
    }

    @Test
    void aWsInstanceCarriesOnAcrossARestartWithItsJournal() throws Exception {
        int port = freePort();
        int wsPort = freePort();
        DispatcherConfig cfg = DispatcherConfig.local().withToken(TOKEN).withPort(port)
                .withJournal(journal, FsyncPolicy.ALWAYS).withWs(wsPort, WsTransport.Settings.defaults());
        Dispatcher first = Dispatcher.start(cfg);
        Executor exec = Executor.start(ExecutorConfig.of("127.0.0.1", port).withId("survivor").withSlots(2)
                .withToken(TOKEN).withReconnectFor(Duration.ofSeconds(60)));
        String url = first.wsUrl();
        Dispatcher second = null;
        try {
            first.awaitExecutors(1, Duration.ofSeconds(30));
            String created = call(url, "CreateInstance", "<f:leaseSeconds>600</f:leaseSeconds>");
            Matcher k = Pattern.compile("<f:key>([^<]+)</f:key>").matcher(created);
            assertThat(k.find()).isTrue();
            String key = k.group(1);
            StringBuilder tasks = new StringBuilder("<f:key>" + key + "</f:key>");
            for (int i = 0; i < 40; i++) {
                tasks.append("<f:task><f:command>/bin/sleep</f:command><f:arg>0.05</f:arg></f:task>");
            }
            call(url, "Submit", tasks.toString());
            Map<Long, Integer> seen = new HashMap<>();
            long ack = fetch(url, key, 0, seen, 5);

            first.stopForRestart();
            second = Dispatcher.start(cfg);
            assertThat(second.wsUrl()).isEqualTo(url);
            // the same key works on the new dispatcher, and the instance takes more work
            call(url, "Submit", "<f:key>" + key + "</f:key><f:task><f:command>/bin/true</f:command></f:task>");
            fetch(url, key, ack, seen, 41);
            assertThat(seen).hasSize(41);
            assertThat(seen.values()).allSatisfy(n -> assertThat(n).as("fetches per task").isEqualTo(1));
            call(url, "Destroy", "<f:key>" + key + "</f:key>");
        } finally {
            exec.close();
            if (second != null) {
                second.close();
            }
            first.close();
        }
    }
}
