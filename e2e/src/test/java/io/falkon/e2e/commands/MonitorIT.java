package io.falkon.e2e.commands;

import io.falkon.cli.Falkon;
import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.transport.monitor.MonitorTransport;
import io.falkon.executor.Executor;
import io.falkon.executor.ExecutorConfig;
import io.falkon.protocol.TaskSpec;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.Socket;
import java.net.SocketTimeoutException;
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
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The monitoring port as a scraper and as an attacker see it: /metrics parsed by Prometheus's own
 * promtool and agreeing with the status document; the token required everywhere (bearer, or the
 * session cookie the login sets); and no way to hold it up or fill it (methods, sizes, slow
 * senders, connection and stream limits).
 */
class MonitorIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int TASKS = 120;
    private static Dispatcher dispatcher;
    private static Executor executor;
    private static String base;
    private static String token;
    private static final HttpClient HTTP = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();

    @TempDir
    static Path dir;

    @BeforeAll
    static void start() throws Exception {
        dispatcher = Dispatcher.start(DispatcherConfig.local().toBuilder()
                .http(0, new MonitorTransport.Settings(16, 2, 30, 2)).build());
        token = dispatcher.token().value();
        base = dispatcher.httpUrl();
        executor = Executor.start(ExecutorConfig.of("127.0.0.1", dispatcher.port()).withId("monitor-exec")
                .withSlots(4).withToken(token));
        dispatcher.awaitExecutors(1, Duration.ofSeconds(30));
        try (FalkonClient c = FalkonClient.connect("127.0.0.1:" + dispatcher.port(),
                ClientOptions.defaults().withToken(token))) {
            Instance in = c.createInstance("metrics");
            List<CompletableFuture<TaskResult>> fs = new ArrayList<>();
            for (int i = 0; i < TASKS; i++) {
                fs.add(in.submit(TaskSpec.of("/bin/sh", "-c", "exit " + (i % 10 == 0 ? 1 : 0))));
            }
            CompletableFuture.allOf(fs.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        }
    }

    @AfterAll
    static void stop() {
        executor.close();
        dispatcher.close();
    }

    private static HttpResponse<String> get(String path, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path.substring(1))).timeout(Duration.ofSeconds(20));
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static double metric(String text, String name) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + " ([0-9.eE+-]+)$").matcher(text);
        assertThat(m.find()).as("%s in%n%s", name, text).isTrue();
        return Double.parseDouble(m.group(1));
    }

    @Test
    void metricsParseWithPromtoolAndAgreeWithTheStatusDocument() throws Exception {
        // the sampler publishes a snapshot a second: wait for one taken after the tasks finished
        await().atMost(Duration.ofSeconds(20)).until(() -> get("/metrics", "Authorization", "Bearer " + token).body()
                .contains("falkon_tasks_completed_total " + (double) TASKS));
        HttpResponse<String> r = get("/metrics", "Authorization", "Bearer " + token);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type").orElse("")).startsWith("text/plain; version=0.0.4");
        String text = r.body();

        Path promtool = DebianPackages.ensure("promtool", "prometheus");
        Path file = dir.resolve("metrics.txt");
        Files.writeString(file, text);
        Process p = new ProcessBuilder(promtool.toString(), "check", "metrics").redirectInput(file.toFile())
                .redirectErrorStream(true).start();
        String verdict = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as("promtool check metrics: %s", verdict).isZero();

        JsonNode status = JSON.readTree(dispatcher.status());
        assertThat(metric(text, "falkon_tasks_completed_total")).isEqualTo(status.get("completed").asDouble())
                .isEqualTo(TASKS);
        assertThat(metric(text, "falkon_tasks_failed_total")).isEqualTo(status.get("failed").asDouble())
                .isEqualTo(TASKS / 10);
        assertThat(metric(text, "falkon_tasks_queued")).isZero();
        assertThat(metric(text, "falkon_executors_registered")).isEqualTo(1);
        assertThat(metric(text, "falkon_dispatch_latency_seconds_count")).isEqualTo(TASKS);
        assertThat(metric(text, "falkon_dispatch_latency_seconds_bucket{le=\"+Inf\"}")).isEqualTo(TASKS);
        assertThat(text).contains("falkon_cache_hits_total{kind=\"local\"}", "falkon_cache_hits_total{kind=\"peer\"}",
                "falkon_cache_hits_total{kind=\"store\"}", "jvm_memory_used_bytes", "jvm_threads_current");
    }

    @Test
    void everyPathNeedsTheToken() throws Exception {
        for (String path : List.of("/", "/metrics", "/status", "/events", "/app.js", "/uplot.js")) {
            HttpResponse<String> none = get(path);
            assertThat(none.statusCode()).as(path).isEqualTo(401);
            assertThat(none.headers().firstValue("www-authenticate")).as(path).contains("Bearer realm=\"falkon\"");
            assertThat(none.body()).doesNotContain("dispatcherId");
            assertThat(get(path, "Authorization", "Bearer wrong-" + token).statusCode()).as(path).isEqualTo(401);
            assertThat(get(path, "Cookie", "falkon_session=" + token).statusCode())
                    .as("the token itself is not a session cookie: %s", path).isEqualTo(401);
        }
        assertThat(get("/status", "X-Falkon-Token", token).statusCode()).isEqualTo(200);
        assertThat(get("/?token=wrong").statusCode()).isEqualTo(401);
    }

    @Test
    void theLoginSetsASessionCookieAndTakesTheTokenOutOfTheAddress() throws Exception {
        HttpResponse<String> login = get("/?token=" + token);
        assertThat(login.statusCode()).isEqualTo(303);
        assertThat(login.headers().firstValue("location")).contains("/");
        String cookie = login.headers().firstValue("set-cookie").orElseThrow();
        assertThat(cookie).contains("HTTPOnly", "SameSite=Strict").doesNotContain(token);
        String session = cookie.substring(0, cookie.indexOf(';'));
        HttpResponse<String> page = get("/", "Cookie", session);
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body()).contains("<script src=\"/app.js\"");
        assertThat(page.headers().firstValue("content-security-policy").orElse("")).contains("script-src 'self'");
        JsonNode status = JSON.readTree(get("/status", "Cookie", session).body());
        assertThat(status.get("dispatcherId").asText()).isNotEmpty();
    }

    @Test
    void eventsStreamStatusDocuments() throws Exception {
        HttpURLConnection c = (HttpURLConnection) URI.create(base + "events").toURL().openConnection();
        c.setRequestProperty("Authorization", "Bearer " + token);
        c.setReadTimeout(10_000);
        assertThat(c.getResponseCode()).isEqualTo(200);
        assertThat(c.getContentType()).startsWith("text/event-stream");
        try (BufferedReader in = new BufferedReader(new InputStreamReader(c.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            List<Integer> registered = new ArrayList<>();
            while (registered.size() < 3 && (line = in.readLine()) != null) {
                if (line.startsWith("data: ")) {
                    registered.add(JSON.readTree(line.substring(6)).get("executors").get("registered").asInt());
                }
            }
            // a first document at once (the latest sample, which may predate the executor), then one a second
            assertThat(registered).hasSize(3).endsWith(1, 1);
        } finally {
            c.disconnect();
        }
    }

    @Test
    void onlyGetAndHeadAndNoBodies() throws Exception {
        HttpResponse<String> post = HTTP.send(HttpRequest.newBuilder(URI.create(base + "metrics"))
                .header("Authorization", "Bearer " + token).POST(HttpRequest.BodyPublishers.ofString("x")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(post.statusCode()).isEqualTo(405);
        String big = "x".repeat(20_000);
        try (Socket s = new Socket("127.0.0.1", dispatcher.httpPort())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(("GET /status HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token
                    + "\r\nX-Big: " + big + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            String reply = new String(s.getInputStream().readNBytes(64), StandardCharsets.US_ASCII);
            assertThat(reply).as("oversized headers").startsWith("HTTP/1.1 431");
        }
        assertThat(get("/no/such/page", "Authorization", "Bearer " + token).statusCode()).isEqualTo(404);
    }

    @Test
    void aSlowSenderIsCutOffAndOthersAreServedMeanwhile() throws Exception {
        try (Socket slow = new Socket("127.0.0.1", dispatcher.httpPort())) {
            slow.setSoTimeout(15_000);
            OutputStream out = slow.getOutputStream();
            out.write("GET /status HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(get("/status", "Authorization", "Bearer " + token).statusCode()).isEqualTo(200);
            InputStream in = slow.getInputStream();
            assertThat(in.read()).as("closed without an answer (the socket's own timeout bounds the wait)").isEqualTo(-1);
        }
    }

    @Test
    void connectionsAndStreamsAreBounded() throws Exception {
        List<HttpURLConnection> streams = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                HttpURLConnection c = (HttpURLConnection) URI.create(base + "events").toURL().openConnection();
                c.setRequestProperty("Authorization", "Bearer " + token);
                assertThat(c.getResponseCode()).isEqualTo(200);
                streams.add(c);
            }
            HttpResponse<String> third = get("/events", "Authorization", "Bearer " + token);
            assertThat(third.statusCode()).as("a third dashboard over the limit of 2").isEqualTo(503);
        } finally {
            streams.forEach(HttpURLConnection::disconnect);
        }
        // connections that say nothing: at most 16 are held open; beyond that each is closed at once
        List<Socket> held = new ArrayList<>();
        int refused = 0;
        try {
            for (int i = 0; i < 24; i++) {
                Socket s = new Socket("127.0.0.1", dispatcher.httpPort());
                s.setSoTimeout(300);
                try {
                    if (s.getInputStream().read() == -1) {
                        refused++;
                        s.close();
                        continue;
                    }
                } catch (SocketTimeoutException stillOpen) {
                    // held: the server keeps it until its idle timeout
                }
                held.add(s);
            }
            assertThat(held.size()).as("connections held open").isLessThanOrEqualTo(16);
            assertThat(refused).as("connections over the limit closed at once").isGreaterThanOrEqualTo(8);
        } finally {
            for (Socket s : held) {
                s.close();
            }
        }
        await().atMost(Duration.ofSeconds(10)).ignoreExceptions()
                .until(() -> get("/status", "Authorization", "Bearer " + token).statusCode() == 200);
    }

    static String readAll(InputStream in) throws IOException {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
}
