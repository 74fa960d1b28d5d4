package io.falkon.e2e.client;

import io.falkon.client.FalkonClient;
import io.falkon.client.FalkonException;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.transport.ws.WsTransport;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.TaskSpec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import java.net.SocketTimeoutException;
import org.junit.jupiter.api.io.TempDir;

/**
 * The WS interface tried as an attacker would: no token or a wrong one, requests that lie about
 * their size, trickle in or never end, bodies that are not SOAP, operations that do not match their
 * action, hundreds of idle connections and long-polls beside a normal caller, a forged Host header,
 * tasks over the per-task limit. One dispatcher with two executors running real processes.
 */
class WsSecurityTest {
    private static final String SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/";
    private static final String NS = "urn:falkon:ws:1";
    private static final Pattern CLASS_NAME = Pattern.compile("\\b[a-z]+\\.[a-z]+(\\.[a-z0-9]+)*\\.[A-Z]\\w+");
    /** A normal call must not wait behind attackers; the old server made it wait 10-14 s or time out. */
    private static final Duration PROMPT = Duration.ofSeconds(5);

    private static Topology topology;
    private static String url;
    private static URI uri;
    private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @BeforeAll
    static void start() throws Exception {
        topology = new Topology(DispatcherConfig.local().withMaxTaskBytes(4096).withAdvertiseHost("falkon.example")
                .withWs(0, WsTransport.Settings.defaults().withMaxRequestBytes(1 << 20)), 2, 2);
        url = topology.dispatcher.wsUrl();
        uri = URI.create(url.replace("falkon.example", "127.0.0.1"));
    }

    @AfterAll
    static void stop() {
        topology.close();
    }

    private static String token() {
        return topology.dispatcher.token().value();
    }

    private static String envelope(String op, String content, String soapHeader) {
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?><s:Envelope xmlns:s=\"" + SOAP11 + "\" xmlns:f=\"" + NS + "\">"
                + (soapHeader == null ? "" : "<s:Header>" + soapHeader + "</s:Header>")
                + "<s:Body><f:" + op + ">" + content + "</f:" + op + "></s:Body></s:Envelope>";
    }

    private static HttpResponse<String> post(String op, String body, String authorization, String action)
            throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(PROMPT).header("Content-Type", "text/xml")
                .header("SOAPAction", "\"" + action + "\"").POST(HttpRequest.BodyPublishers.ofString(body));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> call(String op, String content) throws Exception {
        return post(op, envelope(op, content, null), "Bearer " + token(), NS + ":" + op);
    }

    private static String element(String xml, String name) {
        Matcher m = Pattern.compile("<(?:\\w+:)?" + name + ">([^<]*)</").matcher(xml);
        assertThat(m.find()).as("<%s> in %s", name, xml).isTrue();
        return m.group(1);
    }

    private static String fault(HttpResponse<String> r) {
        assertThat(r.body()).as("a fault").contains("Fault>");
        String code = element(r.body(), "faultcode");
        assertThat(code).as(r.body()).endsWith(":Client");
        String reason = element(r.body(), "faultstring");
        assertThat(reason).as("no internal class names").doesNotContainPattern(CLASS_NAME);
        return reason;
    }

    private static JsonNode status() throws Exception {
        return new ObjectMapper().readTree(topology.dispatcher.status());
    }

    private static String newInstance() throws Exception {
        return element(call("CreateInstance", "<f:leaseSeconds>600</f:leaseSeconds>").body(), "key");
    }

    // ---- authentication ----------------------------------------------------------------------

    @Test
    void aCallWithoutTheTokenOrWithAWrongOneRunsNothing(@TempDir Path dir) throws Exception {
        Path marker = dir.resolve("ran");
        String key = newInstance();
        String task = "<f:key>" + key + "</f:key><f:task><f:command>/usr/bin/touch</f:command><f:arg>" + marker
                + "</f:arg></f:task>";
        long before = status().path("completed").asLong() + status().path("queued").asLong();
        int instances = status().path("instances").asInt();

        HttpResponse<String> none = post("Submit", envelope("Submit", task, null), null, NS + ":Submit");
        HttpResponse<String> wrong = post("Submit", envelope("Submit", task, null), "Bearer not-the-token",
                NS + ":Submit");
        HttpResponse<String> wrongHeader = post("Submit", envelope("Submit", task,
                "<f:token>not-the-token</f:token>"), null, NS + ":Submit");
        HttpResponse<String> create = post("CreateInstance", envelope("CreateInstance", "", null), null,
                NS + ":CreateInstance");
        for (HttpResponse<String> r : List.of(none, wrong, wrongHeader, create)) {
            assertThat(r.statusCode()).isEqualTo(401);
            assertThat(r.headers().firstValue("WWW-Authenticate")).hasValue("Bearer realm=\"falkon\"");
            assertThat(fault(r)).contains("authentication required");
        }
        HttpResponse<String> wsdl = http.send(HttpRequest.newBuilder(URI.create(uri + "?wsdl")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(wsdl.statusCode()).isEqualTo(401);
        assertThat(status().path("instances").asInt()).as("no instance created").isEqualTo(instances);
        assertThat(status().path("completed").asLong() + status().path("queued").asLong()).as("nothing queued")
                .isEqualTo(before);
        assertThat(marker).doesNotExist();

        // the token in the SOAP header the WSDL declares works as well as the HTTP header
        HttpResponse<String> viaHeader = post("Submit", envelope("Submit", task, "<f:token>" + token() + "</f:token>"),
                null, NS + ":Submit");
        assertThat(viaHeader.statusCode()).as(viaHeader.body()).isEqualTo(200);
        assertThat(element(viaHeader.body(), "accepted")).isEqualTo("1");
        call("GetResults", "<f:key>" + key + "</f:key><f:waitSeconds>30</f:waitSeconds>");
        assertThat(marker).exists();
        call("Destroy", "<f:key>" + key + "</f:key>");
    }

    @Test
    void aHeaderThatMustBeUnderstoodButIsNotIsAFault() throws Exception {
        HttpResponse<String> r = post("GetStatus", envelope("GetStatus", "", "<x:tx xmlns:x=\"urn:other\" "
                + "s:mustUnderstand=\"1\">1</x:tx>"), "Bearer " + token(), NS + ":GetStatus");
        assertThat(fault(r)).contains("must be understood");
    }

    // ---- operations and their bodies ---------------------------------------------------------

    @Test
    void theBodyMustMatchTheOperationTheActionNames() throws Exception {
        String key = newInstance();
        long refusedBefore = topology.dispatcher.badRequests();
        HttpResponse<String> r = post("Destroy", envelope("GetStatus", "<f:key>" + key + "</f:key>", null),
                "Bearer " + token(), NS + ":Destroy");
        assertThat(fault(r)).contains("SOAPAction").contains("does not match").contains("GetStatus");
        assertThat(topology.dispatcher.badRequests()).as("refused and logged as a bad request")
                .isGreaterThan(refusedBefore);
        assertThat(element(call("GetStatus", "<f:key>" + key + "</f:key>").body(), "queued"))
                .as("the instance was not destroyed").isEqualTo("0");
        call("Destroy", "<f:key>" + key + "</f:key>");
    }

    @Test
    void oneOperationPerRequestAnotherAfterItIsRefusedNotIgnored() throws Exception {
        String key = newInstance();
        long refusedBefore = topology.dispatcher.badRequests();
        String two = "<?xml version=\"1.0\"?><s:Envelope xmlns:s=\"" + SOAP11 + "\" xmlns:f=\"" + NS + "\"><s:Body>"
                + "<f:GetStatus><f:key>" + key + "</f:key></f:GetStatus>"
                + "<f:Destroy><f:key>" + key + "</f:key></f:Destroy></s:Body></s:Envelope>";
        HttpResponse<String> r = post("GetStatus", two, "Bearer " + token(), NS + ":GetStatus");
        assertThat(r.statusCode()).isEqualTo(500);
        assertThat(fault(r)).contains("Destroy> after", "GetStatus>: one operation per request");
        assertThat(topology.dispatcher.badRequests()).isGreaterThan(refusedBefore);
        assertThat(element(call("GetStatus", "<f:key>" + key + "</f:key>").body(), "queued"))
                .as("neither operation ran: the instance is still there").isEqualTo("0");
        call("Destroy", "<f:key>" + key + "</f:key>");
    }

    @Test
    void bodiesThatAreNotSoapGetClientFaultsThatNameTheProblem() throws Exception {
        List<String> bodies = List.of("this is not XML", "",
                "<?xml version=\"1.0\"?><!DOCTYPE lol [<!ENTITY lol \"lol\">]><s:Envelope xmlns:s=\"" + SOAP11
                        + "\"><s:Body/></s:Envelope>",
                "<s:Envelope xmlns:s=\"" + SOAP11 + "\"/>",
                "<s:Envelope xmlns:s=\"" + SOAP11 + "\"><s:Body/></s:Envelope>",
                "<s:Envelope xmlns:s=\"" + SOAP11 + "\"><s:Body><f:Nope xmlns:f=\"" + NS + "\"/></s:Body></s:Envelope>");
        for (String body : bodies) {
            long refusedBefore = topology.dispatcher.badRequests();
            HttpResponse<String> r = post("GetStatus", body, "Bearer " + token(), "");
            assertThat(r.statusCode()).as(body).isEqualTo(500);
            assertThat(fault(r)).as(body).isNotBlank();
            assertThat(topology.dispatcher.badRequests()).as("logged: %s", body).isGreaterThan(refusedBefore);
        }
        // bytes that are not UTF-8
        HttpResponse<String> badUtf8 = http.send(HttpRequest.newBuilder(uri).timeout(PROMPT)
                .header("Content-Type", "text/xml; charset=UTF-8").header("Authorization", "Bearer " + token())
                .POST(HttpRequest.BodyPublishers.ofByteArray(("<s:Envelope xmlns:s=\"" + SOAP11 + "\"><s:Body>"
                        + "\u00ff</s:Body></s:Envelope>").getBytes(StandardCharsets.ISO_8859_1))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(fault(badUtf8)).isNotBlank();
        // a content type that is not SOAP
        HttpResponse<String> json = http.send(HttpRequest.newBuilder(uri).timeout(PROMPT)
                .header("Content-Type", "application/json").header("Authorization", "Bearer " + token())
                .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(json.statusCode()).isEqualTo(415);
        assertThat(fault(json)).contains("Content-Type");
    }

    @Test
    void theAdvertisedEndpointIsTheConfiguredOneNeverTheHostHeader() throws Exception {
        String body = envelope("CreateInstance", "", null);
        String response = raw("POST " + uri.getPath() + " HTTP/1.1\r\nHost: evil.example:666\r\n"
                + "Content-Type: text/xml\r\nAuthorization: Bearer " + token() + "\r\nContent-Length: "
                + body.getBytes(StandardCharsets.UTF_8).length + "\r\nConnection: close\r\n\r\n" + body);
        assertThat(response).startsWith("HTTP/1.1 200");
        assertThat(element(response, "endpoint")).isEqualTo(url).contains("falkon.example").doesNotContain("evil");
        HttpResponse<String> wsdl = http.send(HttpRequest.newBuilder(URI.create(uri + "?wsdl"))
                .header("Authorization", "Bearer " + token()).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(wsdl.body()).contains("location=\"" + url + "\"");
        call("Destroy", "<f:key>" + element(response, "key") + "</f:key>");
    }

    // ---- sizes -------------------------------------------------------------------------------

    @Test
    void aRequestOverTheSizeLimitIsRefusedBeforeItsBodyIsSent() throws Exception {
        // the headers announce 100 MB; not one byte of the body is sent, and the answer comes anyway
        String response = raw("POST " + uri.getPath() + " HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\n"
                + "Authorization: Bearer " + token() + "\r\nContent-Length: 100000000\r\n\r\n");
        assertThat(response).startsWith("HTTP/1.1 413").contains("over the limit");
        // and without a length there is nothing to reserve against: refused too
        String chunked = raw("POST " + uri.getPath() + " HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n");
        assertThat(chunked).startsWith("HTTP/1.1 411");
    }

    @Test
    void aTaskOverThePerTaskLimitIsRefusedAtSubmissionOverWsAndTcpAlike() throws Exception {
        String big = "x".repeat(5000);
        String key = newInstance();
        HttpResponse<String> r = call("Submit", "<f:key>" + key + "</f:key><f:task><f:command>/bin/true</f:command>"
                + "</f:task><f:task><f:command>/bin/echo</f:command><f:arg>" + big + "</f:arg></f:task>");
        assertThat(fault(r)).contains("task 1 of the bundle").contains("over the limit of 4096 bytes per task");
        call("Destroy", "<f:key>" + key + "</f:key>");
        try (FalkonClient tcp = topology.client(); Instance in = tcp.createInstance("big")) {
            CompletableFuture<TaskResult> f = in.submit(TaskSpec.of("/bin/echo", big));
            assertThatThrownBy(() -> f.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(FalkonException.class)
                    .cause().hasMessageContaining("over the limit of 4096 bytes per task")
                    .extracting(e -> ((FalkonException) e).code()).isEqualTo(ErrorCode.INVALID_TASK);
            assertThat(in.submit(TaskSpec.of("/bin/echo", "small")).get(30, TimeUnit.SECONDS).stdout())
                    .isEqualTo("small\n");
        }
    }

    // ---- many connections --------------------------------------------------------------------

    @Test
    void fiveHundredIdleAndSlowConnectionsDoNotKeepANormalCallWaiting() throws Exception {
        List<Socket> attackers = new ArrayList<>();
        ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();
        try {
            for (int i = 0; i < 250; i++) {
                attackers.add(new Socket(uri.getHost(), uri.getPort())); // idle: says nothing
            }
            for (int i = 0; i < 250; i++) {
                Socket s = new Socket(uri.getHost(), uri.getPort());
                attackers.add(s);
                s.getOutputStream().write(("POST " + uri.getPath() + " HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml"
                        + "\r\nAuthorization: Bearer " + token() + "\r\nContent-Length: 1000\r\n\r\n<")
                        .getBytes(StandardCharsets.US_ASCII));
            }
            trickle.scheduleAtFixedRate(() -> { // a byte now and then: the slow-loris
                for (Socket s : attackers) {
                    try {
                        s.getOutputStream().write(' ');
                    } catch (IOException e) {
                        // closed by the dispatcher: fine
                    }
                }
            }, 200, 500, TimeUnit.MILLISECONDS);
            HttpResponse<String> r = call("GetStatus", "");
            assertThat(r.statusCode()).isEqualTo(200);
            // served while the attack goes on (no clock needed): every slow sender's connection is still open
            for (Socket s : attackers) {
                s.setSoTimeout(1);
                assertThatThrownBy(() -> s.getInputStream().read()).as("still held open, not yet cut")
                        .isInstanceOf(java.net.SocketTimeoutException.class);
            }
        } finally {
            trickle.shutdownNow();
            for (Socket s : attackers) {
                s.close();
            }
        }
    }

    @Test
    void twoHundredLongPollsDoNotKeepANormalCallWaiting() throws Exception {
        String key = newInstance();
        call("Submit", "<f:key>" + key + "</f:key><f:task><f:command>/bin/sleep</f:command><f:arg>30</f:arg></f:task>");
        String poll = envelope("GetResults", "<f:key>" + key + "</f:key><f:waitSeconds>25</f:waitSeconds>", null);
        List<CompletableFuture<HttpResponse<String>>> polls = new ArrayList<>();
        HttpClient pollers = HttpClient.newHttpClient();
        for (int i = 0; i < 200; i++) {
            polls.add(pollers.sendAsync(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(60))
                    .header("Content-Type", "text/xml").header("Authorization", "Bearer " + token())
                    .POST(HttpRequest.BodyPublishers.ofString(poll)).build(), HttpResponse.BodyHandlers.ofString()));
        }
        // the instance's status counts the GetResults calls waiting on it
        await().atMost(Duration.ofSeconds(20)).until(() -> call("GetStatus", "<f:key>" + key + "</f:key>").body()
                .contains("\"waitingPolls\":200"));
        HttpResponse<String> r = call("GetStatus", "<f:key>" + key + "</f:key>");
        assertThat(r.statusCode()).isEqualTo(200);
        // answered while all 200 still wait (no clock needed): a long-poll holds no thread
        assertThat(polls).as("still waiting: a long-poll holds no thread").noneMatch(CompletableFuture::isDone);
        call("Destroy", "<f:key>" + key + "</f:key>");
        for (CompletableFuture<HttpResponse<String>> p : polls) {
            assertThat(p.get(60, TimeUnit.SECONDS).body()).contains("gone");
        }
    }

    /** Sends {@code request} on a raw socket and returns everything answered until the server closes or 5 s pass. */
    private static String raw(String request) throws IOException {
        try (Socket s = new Socket(uri.getHost(), uri.getPort())) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write(request.getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            byte[] buf = new byte[8192];
            try {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    got.write(buf, 0, n);
                    if (got.toString(StandardCharsets.UTF_8).contains("</soapenv:Envelope>")
                            || (got.size() > 0 && !got.toString(StandardCharsets.UTF_8).startsWith("HTTP/1.1 200"))
                            && got.toString(StandardCharsets.UTF_8).contains("\r\n\r\n")) {
                        break;
                    }
                }
            } catch (SocketTimeoutException e) {
                // what came is what there is
            }
            return got.toString(StandardCharsets.UTF_8);
        }
    }
}
