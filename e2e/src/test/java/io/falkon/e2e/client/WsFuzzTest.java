package io.falkon.e2e.client;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.transport.ws.WsTransport;
import io.falkon.protocol.TaskSpec;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP/SOAP port's counterpart of {@link FuzzTest}: random bytes, mutated HTTP heads, lying
 * lengths and mutated SOAP envelopes (valid calls of every operation, bit-flipped, truncated,
 * their elements renamed, duplicated or given absurd values) from several connections, while a
 * well-behaved WS client keeps working. The dispatcher never crashes or hangs, every answer is a
 * well-formed HTTP response, every fault has a code and names no internal class, nothing is
 * logged as an internal error, and the bad requests are logged at a bounded rate.
 */
class WsFuzzTest {
    static final String TOKEN = "ws-fuzz-token";
    static final String SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/";
    static final String NS = "urn:falkon:ws:1";
    static final Pattern CLASS_NAME = Pattern.compile("\\b[a-z]+\\.[a-z]+(\\.[a-z0-9]+)*\\.[A-Z]\\w+");
    static final Pattern FAULT_CODE = Pattern.compile("<faultcode>([^<]*)</faultcode>");
    static final List<String> CALLS = List.of(
            "<f:CreateInstance><f:clientName>fuzz</f:clientName><f:leaseSeconds>30</f:leaseSeconds></f:CreateInstance>",
            "<f:Submit><f:key>0123456789abcdef-00</f:key><f:task><f:id>1</f:id><f:command>/bin/true</f:command>"
                    + "<f:arg>a</f:arg><f:env name=\"A\">b</f:env><f:wallTimeSeconds>5</f:wallTimeSeconds></f:task>"
                    + "</f:Submit>",
            "<f:GetStatus><f:key>0123456789abcdef-00</f:key></f:GetStatus>",
            "<f:GetStatus/>",
            "<f:GetResults><f:key>0123456789abcdef-00</f:key><f:max>5</f:max><f:waitSeconds>0</f:waitSeconds>"
                    + "<f:ack>3</f:ack></f:GetResults>",
            "<f:Destroy><f:key>0123456789abcdef-00</f:key></f:Destroy>");
    static final List<String> ABSURD = List.of("-1", "-4294967291", "99999999999999999999999", "1e9", "", " 5",
            "0x10", "&amp;", "<![CDATA[7]]>", "\u0000", "\uD800", "&#0;");

    @Test
    void mutatedHttpAndSoapNeitherCrashNorStallTheWsPort() throws Exception {
        long seed = System.nanoTime();
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        Logger falkon = (Logger) LoggerFactory.getLogger("io.falkon.dispatcher");
        falkon.addAppender(logged);
        long t0 = System.nanoTime();
        try (Topology t = new Topology(DispatcherConfig.local().withToken(TOKEN)
                .withWs(0, WsTransport.Settings.defaults().withMaxRequestBytes(64 * 1024)), 1, 4);
             FalkonClient good = FalkonClient.connect(t.dispatcher.wsUrl(), ClientOptions.defaults().withToken(TOKEN));
             Instance in = good.createInstance("steady")) {
            URI ws = URI.create(t.dispatcher.wsUrl());
            SteadyWork steady = new SteadyWork(in);
            ExecutorService fuzzers = Executors.newFixedThreadPool(4);
            List<Future<List<String>>> runs = new ArrayList<>();
            for (int f = 0; f < 4; f++) {
                Random rnd = new Random(seed + f);
                runs.add(fuzzers.submit(() -> fuzz(ws, rnd, 150)));
            }
            List<String> answers = new ArrayList<>();
            for (Future<List<String>> r : runs) {
                answers.addAll(r.get(3, TimeUnit.MINUTES)); // never hangs
            }
            fuzzers.shutdown();
            assertThat(answers).as("connections the dispatcher accepted (seed %d)", seed).hasSize(600);
            for (String a : answers) {
                assertWellFormed(a, seed);
            }
            // the mix reaches every layer: HTTP refusals, SOAP faults and calls that went through
            assertThat(answers).as("seed %d", seed).anyMatch(a -> a.startsWith("HTTP/1.1 4"))
                    .anyMatch(a -> a.contains("<faultcode>soapenv:Client</faultcode>"))
                    .anyMatch(a -> a.startsWith("HTTP/1.1 200"));
            steady.stopAndAssertAllSucceeded();
            assertThat(t.dispatcher.status()).contains("\"registered\":1");
        } finally {
            falkon.detachAppender(logged);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        assertThat(logged.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.ERROR)).toList())
                .as("internal errors (seed %d)", seed).isEmpty();
        assertThat(logged.list.stream().filter(e -> e.getThrowableProxy() != null).toList())
                .as("stack traces for bad requests (seed %d)", seed).isEmpty();
        long warnings = logged.list.stream().filter(e -> e.getLevel() == Level.WARN).count();
        assertThat(warnings).as("bad requests are logged at a bounded rate, not one line each (seed %d)", seed)
                .isLessThan(Math.round(20 * seconds) + 20);
    }

    /** What the port answered: nothing (it hung up), or an HTTP response with a sane status and body. */
    private static void assertWellFormed(String answer, long seed) {
        if (answer.isEmpty()) {
            return;
        }
        assertThat(answer).as("seed %d", seed).matches("(?s)HTTP/1\\.1 [1-5]\\d\\d .*");
        assertThat(answer).as("seed %d", seed).doesNotContainPattern(CLASS_NAME);
        Matcher code = FAULT_CODE.matcher(answer);
        while (code.find()) {
            assertThat(code.group(1)).as("a fault code (seed %d): %s", seed, answer)
                    .isIn("soapenv:Client", "soapenv:Server");
        }
    }

    /** Opens {@code n} connections, each sending something hostile; returns what each got back. */
    static List<String> fuzz(URI ws, Random rnd, int n) {
        List<String> answers = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Socket s;
            try {
                s = new Socket(ws.getHost(), ws.getPort());
            } catch (IOException e) {
                continue; // not accepted: counted as missing
            }
            try (s) {
                s.setSoTimeout(100);
                OutputStream out = s.getOutputStream();
                out.write(request(ws, rnd));
                out.flush();
                answers.add(drain(s.getInputStream()));
            } catch (IOException e) {
                answers.add(""); // reset by the dispatcher: fine
            }
        }
        return answers;
    }

    static byte[] request(URI ws, Random rnd) {
        String call = CALLS.get(rnd.nextInt(CALLS.size()));
        Matcher name = Pattern.compile("<f:(\\w+)").matcher(call);
        String op = name.find() ? name.group(1) : "GetStatus";
        String header = rnd.nextBoolean() ? "" : "<s:Header><f:token>" + (rnd.nextInt(4) == 0 ? "wrong" : TOKEN)
                + "</f:token></s:Header>";
        String body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><s:Envelope xmlns:s=\"" + SOAP11 + "\" xmlns:f=\""
                + NS + "\">" + header + "<s:Body>" + mutateXml(rnd, call) + "</s:Body></s:Envelope>";
        byte[] content = body.getBytes(StandardCharsets.UTF_8);
        switch (rnd.nextInt(8)) {
            case 0 -> content = FuzzTest.randomBytes(rnd, 1 + rnd.nextInt(500));
            case 1 -> content = FuzzTest.mutate(rnd, content);
            case 2 -> content = "<!DOCTYPE x [<!ENTITY a \"aaaa\">]><x>&a;</x>".getBytes(StandardCharsets.UTF_8);
            default -> {
                // the mutated envelope as it is
            }
        }
        int length = switch (rnd.nextInt(10)) {
            case 0 -> content.length + 1 + rnd.nextInt(100); // promises more than it sends
            case 1 -> Math.max(0, content.length - 1 - rnd.nextInt(Math.max(1, content.length)));
            case 2 -> -1; // no Content-Length
            case 3 -> rnd.nextInt(Integer.MAX_VALUE);
            default -> content.length;
        };
        StringBuilder head = new StringBuilder();
        head.append(rnd.nextInt(12) == 0 ? "GET" : rnd.nextInt(12) == 0 ? "PUT" : "POST").append(' ')
                .append(rnd.nextInt(10) == 0 ? "/../../etc/passwd" : ws.getPath()).append(" HTTP/1.1\r\n");
        head.append("Host: ").append(rnd.nextInt(5) == 0 ? "evil.example\r\nX-Injected: 1" : "127.0.0.1").append("\r\n");
        head.append("Content-Type: ").append(rnd.nextInt(8) == 0 ? "application/json" : "text/xml").append("\r\n");
        head.append("SOAPAction: \"").append(NS).append(':').append(rnd.nextInt(6) == 0 ? "Destroy" : op).append("\"\r\n");
        if (rnd.nextInt(4) != 0) {
            head.append("Authorization: Bearer ").append(rnd.nextInt(5) == 0 ? "nope" : TOKEN).append("\r\n");
        }
        if (length >= 0) {
            head.append("Content-Length: ").append(length).append("\r\n");
        }
        if (rnd.nextInt(10) == 0) {
            head.append("Transfer-Encoding: chunked\r\n");
        }
        head.append("\r\n");
        byte[] h = head.toString().getBytes(StandardCharsets.ISO_8859_1);
        if (rnd.nextInt(10) == 0) {
            h = FuzzTest.mutate(rnd, h);
        }
        byte[] all = new byte[h.length + content.length];
        System.arraycopy(h, 0, all, 0, h.length);
        System.arraycopy(content, 0, all, h.length, content.length);
        return all;
    }

    /** A call with one of its elements renamed, repeated, emptied or given an absurd value. */
    static String mutateXml(Random rnd, String call) {
        List<int[]> texts = new ArrayList<>();
        Matcher m = Pattern.compile(">([^<]+)<").matcher(call);
        while (m.find()) {
            texts.add(new int[]{m.start(1), m.end(1)});
        }
        switch (rnd.nextInt(6)) {
            case 0 -> {
                if (!texts.isEmpty()) {
                    int[] t = texts.get(rnd.nextInt(texts.size()));
                    return call.substring(0, t[0]) + ABSURD.get(rnd.nextInt(ABSURD.size())) + call.substring(t[1]);
                }
                return call;
            }
            case 1 -> {
                return call.replaceFirst("<f:(\\w+)>", "<f:$1$1>"); // an element nobody knows (unbalanced)
            }
            case 2 -> {
                int cut = rnd.nextInt(call.length());
                return call.substring(0, cut); // truncated inside the body
            }
            case 3 -> {
                return call.replace("<f:task>", "<f:task><f:id>1</f:id>").replace("</f:Submit>",
                        "<f:task><f:id>1</f:id><f:command>x</f:command></f:task></f:Submit>"); // ids twice
            }
            case 4 -> {
                return "<f:Nested>".repeat(200) + call + "</f:Nested>".repeat(200);
            }
            default -> {
                return call;
            }
        }
    }

    static String drain(InputStream in) throws IOException {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        byte[] buf = new byte[4096];
        try {
            int n;
            while ((n = in.read(buf)) >= 0) {
                got.write(buf, 0, n);
            }
        } catch (SocketTimeoutException e) {
            // quiet: the port waits for more of a request; we hang up
        } catch (IOException e) {
            // reset: keep what came
        }
        return got.toString(StandardCharsets.ISO_8859_1);
    }
}
