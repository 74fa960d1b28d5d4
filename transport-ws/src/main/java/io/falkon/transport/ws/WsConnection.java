package io.falkon.transport.ws;

import io.falkon.client.Connection;
import io.falkon.client.ConnectionLostException;
import io.falkon.client.FalkonException;
import io.falkon.client.InstanceKey;
import io.falkon.client.ResultSink;
import io.falkon.protocol.auth.HttpAuth;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.tls.Tls;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpecCodec;
import io.falkon.protocol.soap.SoapXml;

import javax.xml.stream.XMLInputFactory;
import javax.xml.stream.XMLOutputFactory;
import javax.xml.stream.XMLStreamConstants;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamReader;
import javax.xml.stream.XMLStreamWriter;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

import static io.falkon.protocol.soap.SoapXml.NS;
import static io.falkon.protocol.soap.SoapXml.PREFIX;
import java.io.IOException;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A {@link Connection} over the dispatcher's Web Services interface ({@code docs/ws.md}): SOAP 1.1
 * over HTTP with the JDK's {@link HttpClient}, the messages written and read with StAX. Submits run
 * concurrently (several HTTP requests in flight); each attached instance has one thread that
 * long-polls {@code GetResults} and hands the results to its sink on the connection's serial
 * executor, as the TCP transport does on its I/O thread.
 *
 * <p>Every call presents the token in an {@code Authorization: Bearer} header. Results are
 * acknowledged with the next {@code GetResults} ({@code <ack>}), so a lost reply loses nothing; an
 * instance is taken over with its key ({@code ID-SECRET}). What it does not have: reconnection (a
 * broken HTTP exchange fails the calls it carried; the instance lives on for its lease).
 */
public final class WsConnection implements Connection {
    private static final XMLOutputFactory OUT = XMLOutputFactory.newFactory();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final XMLInputFactory IN = XMLInputFactory.newFactory();
    private static final String SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/";
    /** How long one GetResults waits on the dispatcher before it is sent again. */
    private static final int POLL_WAIT_SECONDS = 20;
    /**
     * Submits in flight at once: enough to keep the dispatcher's HTTP workers busy while one
     * request is on the wire, without opening a connection per bundle (HTTP/1.1 carries one
     * exchange at a time per connection).
     */
    private static final int MAX_CONCURRENT_SUBMITS = 8;

    static {
        IN.setProperty(XMLInputFactory.SUPPORT_DTD, false);
        IN.setProperty(XMLInputFactory.IS_SUPPORTING_EXTERNAL_ENTITIES, false);
    }

    private final URI uri;
    private final Token token;
    private final HttpClient http;
    private final Duration timeout;
    private final ExecutorService serial;
    private final Map<Long, Poller> pollers = new ConcurrentHashMap<>();
    /** The key each instance was created with, which every call about it presents. */
    private final Map<Long, String> keys = new ConcurrentHashMap<>();
    private final Queue<Runnable> waitingSubmits = new ConcurrentLinkedQueue<>();
    private final AtomicInteger activeSubmits = new AtomicInteger();
    private volatile boolean closed;

    private WsConnection(URI uri, Token token, Tls tls, Duration connectTimeout) {
        this.uri = uri;
        this.token = token;
        this.timeout = connectTimeout;
        this.serial = Executors.newSingleThreadExecutor(daemon("falkon-ws-client"));
        HttpClient.Builder b = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(connectTimeout).executor(Executors.newCachedThreadPool(daemon("falkon-ws-http")));
        if (tls != null) {
            b.sslContext(tls.jdkContext());
        }
        this.http = b.build();
    }

    private static ThreadFactory daemon(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /**
     * Connects to the service at {@code url} (e.g. {@code http://head:50600/axis2/services/Falkon})
     * and checks it answers.
     *
     * @throws FalkonException if it cannot be reached or is not a Falkon WS interface
     */
    public static WsConnection connect(String url, Token token, Tls tls, Duration connectTimeout) {
        URI uri;
        try {
            uri = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not a URL: " + url, e);
        }
        if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme())) {
            throw new IllegalArgumentException("a WS address starts with http:// or https://, got " + url);
        }
        WsConnection c = new WsConnection(uri, token, tls, connectTimeout);
        try {
            c.status(0).join();
        } catch (CompletionException e) {
            c.close();
            throw e.getCause() instanceof FalkonException f ? f
                    : new FalkonException("cannot reach the WS interface at " + url, e.getCause());
        }
        return c;
    }

    // ---- the operations --------------------------------------------------------------------

    @Override
    public CompletableFuture<Message.InstanceCreated> createInstance(String clientName, long leaseSeconds) {
        return call("CreateInstance", w -> {
            SoapXml.text(w, "clientName", clientName);
            SoapXml.text(w, "leaseSeconds", Long.toString(leaseSeconds));
        }, r -> {
            String key = null;
            while (next(r)) {
                if (r.getLocalName().equals("instance")) {
                    while (next(r)) {
                        if (r.getLocalName().equals("key")) {
                            key = r.getElementText();
                        } else {
                            SoapXml.skipToEnd(r, "<instance>");
                        }
                    }
                } else {
                    SoapXml.skipToEnd(r, "CreateInstanceResponse");
                }
            }
            if (key == null) {
                throw new XMLStreamException("CreateInstanceResponse has no key");
            }
            InstanceKey.Parts parts = InstanceKey.parse(key);
            keys.put(parts.id(), key.trim());
            return new Message.InstanceCreated(0, parts.id(), parts.secret());
        });
    }

    @Override
    public CompletableFuture<Integer> submit(long instanceId, List<Message.SubmittedTask> bundle) {
        CompletableFuture<Integer> done = new CompletableFuture<>();
        waitingSubmits.add(() -> sendSubmit(instanceId, bundle).whenComplete((n, err) -> {
            activeSubmits.decrementAndGet();
            startSubmits();
            if (err != null) {
                done.completeExceptionally(err instanceof CompletionException && err.getCause() != null
                        ? err.getCause() : err);
            } else {
                done.complete(n);
            }
        }));
        startSubmits();
        return done;
    }

    /** Starts waiting submits while fewer than {@link #MAX_CONCURRENT_SUBMITS} are in flight. */
    private void startSubmits() {
        while (!waitingSubmits.isEmpty()) {
            int active = activeSubmits.get();
            if (active >= MAX_CONCURRENT_SUBMITS) {
                return; // the one that finishes next starts more
            }
            if (!activeSubmits.compareAndSet(active, active + 1)) {
                continue;
            }
            Runnable next = waitingSubmits.poll();
            if (next == null) {
                activeSubmits.decrementAndGet();
                continue; // another thread took it; look again
            }
            next.run();
        }
    }

    private CompletableFuture<Integer> sendSubmit(long instanceId, List<Message.SubmittedTask> bundle) {
        return call("Submit", w -> {
            SoapXml.text(w, "key", keyOf(instanceId));
            for (int i = 0, n = bundle.size(); i < n; i++) {
                Message.SubmittedTask t = bundle.get(i);
                SoapXml.writeTask(w, t.clientTaskId(), TaskSpecCodec.decode(t.spec()));
            }
        }, r -> {
            int accepted = -1;
            while (next(r)) {
                if (r.getLocalName().equals("accepted")) {
                    accepted = Integer.parseInt(r.getElementText().trim());
                } else {
                    SoapXml.skipToEnd(r, "SubmitResponse");
                }
            }
            return accepted;
        });
    }

    @Override
    public CompletableFuture<String> status(long instanceId) {
        return call("GetStatus", w -> {
            if (instanceId != 0) {
                SoapXml.text(w, "key", keyOf(instanceId));
            }
        }, r -> {
            String doc = null;
            while (next(r)) {
                if (r.getLocalName().equals("document")) {
                    doc = r.getElementText();
                } else {
                    SoapXml.skipToEnd(r, "GetStatusResponse");
                }
            }
            if (doc == null) {
                throw new XMLStreamException("GetStatusResponse has no document");
            }
            return doc;
        });
    }

    @Override
    public CompletableFuture<Integer> destroy(long instanceId) {
        return call("Destroy", w -> SoapXml.text(w, "key", keyOf(instanceId)), r -> cancelled(r, "DestroyResponse"));
    }

    @Override
    public CompletableFuture<Integer> halt(long instanceId) {
        return call("Halt", w -> SoapXml.text(w, "key", keyOf(instanceId)), r -> cancelled(r, "HaltResponse"));
    }

    @Override
    public CompletableFuture<Integer> cancelTasks(long instanceId, long[] taskIds) {
        return call("CancelTasks", w -> {
            SoapXml.text(w, "key", keyOf(instanceId));
            for (long id : taskIds) {
                SoapXml.text(w, "taskId", Long.toUnsignedString(id));
            }
        }, r -> cancelled(r, "CancelTasksResponse"));
    }

    /** The {@code <cancelled>} count of a Destroy, Halt or CancelTasks response (0 if it says none). */
    private static int cancelled(XMLStreamReader r, String response) throws XMLStreamException {
        int cancelled = 0;
        while (next(r)) {
            if (r.getLocalName().equals("cancelled")) {
                cancelled = Integer.parseInt(r.getElementText().trim());
            } else {
                SoapXml.skipToEnd(r, response);
            }
        }
        return cancelled;
    }

    /** What one GetResults returned. */
    private record Batch(List<Message.DeliveredResult> results, long outstanding) {
    }

    private CompletableFuture<Batch> results(long instanceId, int waitSeconds, long ack) {
        return call("GetResults", w -> {
            SoapXml.text(w, "key", keyOf(instanceId));
            SoapXml.text(w, "waitSeconds", Integer.toString(waitSeconds));
            SoapXml.text(w, "ack", Long.toString(ack));
        }, r -> {
            List<Message.DeliveredResult> out = new ArrayList<>();
            long outstanding = 0;
            while (next(r)) {
                switch (r.getLocalName()) {
                    case "result" -> out.add(SoapXml.readResult(r));
                    case "outstanding" -> outstanding = Long.parseLong(r.getElementText().trim());
                    default -> SoapXml.skipToEnd(r, "GetResultsResponse");
                }
            }
            return new Batch(out, outstanding);
        });
    }

    @Override
    public CompletableFuture<Message.Attached> attach(long instanceId, String secret) {
        String previous = keys.put(instanceId, InstanceKey.format(instanceId, secret));
        return status(instanceId).thenApply(doc -> {
            try {
                JsonNode d = JSON.readTree(doc);
                return new Message.Attached(0, instanceId, d.path("highestTaskId").asLong(-1),
                        d.path("unfetched").asInt());
            } catch (IOException e) {
                throw new CompletionException(new FalkonException("unreadable GetStatus document from " + uri, e));
            }
        }).whenComplete((a, err) -> {
            if (err != null) { // a wrong secret does not cost the instance the key it had
                if (previous != null) {
                    keys.put(instanceId, previous);
                } else {
                    keys.remove(instanceId);
                }
            }
        });
    }

    @Override
    public void ack(long instanceId, long upToSeq) {
        Poller p = pollers.get(instanceId);
        if (p != null) {
            p.acked = Math.max(p.acked, upToSeq); // travels with the next GetResults
        }
    }

    @Override
    public void route(long instanceId, ResultSink sink) {
        Poller p = new Poller(instanceId, sink);
        if (pollers.putIfAbsent(instanceId, p) == null) {
            p.thread.start();
        }
    }

    @Override
    public void unroute(long instanceId) {
        Poller p = pollers.remove(instanceId);
        if (p != null) {
            p.stopped = true;
            p.thread.interrupt();
        }
    }

    @Override
    public Executor executor() {
        return serial;
    }

    /**
     * A quarter of the WS interface's default request limit (32 MiB): a task's XML can be larger
     * than its encoded spec (escaped text, element names).
     */
    @Override
    public int maxBundleBytes() {
        return 8 << 20;
    }

    @Override
    public boolean connected() {
        return !closed;
    }

    @Override
    public String address() {
        return uri.toString();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Long id : new ArrayList<>(pollers.keySet())) {
            unroute(id);
        }
        serial.shutdown();
    }

    /** One instance's long-poll loop: GetResults until detached, results to the sink in order. */
    private final class Poller implements Runnable {
        final long id;
        final ResultSink sink;
        final Thread thread;
        volatile boolean stopped;
        /**
         * The highest result seq received: acknowledged with the next GetResults, so that a reply lost
         * on the way is fetched again and one that arrived is not.
         */
        volatile long acked;

        Poller(long id, ResultSink sink) {
            this.id = id;
            this.sink = sink;
            this.thread = new Thread(this, "falkon-ws-results-" + Long.toUnsignedString(id, 16));
            thread.setDaemon(true);
        }

        @Override
        public void run() {
            while (!stopped && !closed) {
                Batch b;
                try {
                    b = results(id, POLL_WAIT_SECONDS, acked).join();
                } catch (CompletionException e) {
                    if (!stopped && !closed) {
                        Throwable cause = e.getCause();
                        serial.execute(() -> sink.connectionLost(cause));
                    }
                    return;
                }
                if (!b.results().isEmpty() && !stopped) {
                    for (Message.DeliveredResult r : b.results()) {
                        acked = Math.max(acked, r.seq());
                    }
                    serial.execute(() -> sink.deliver(b.results()));
                }
            }
        }
    }

    // ---- SOAP over HTTP --------------------------------------------------------------------

    private interface Content {
        void write(XMLStreamWriter w) throws XMLStreamException;
    }

    private interface Reply<T> {
        /** Reads the response element's children (the reader is on its start tag). */
        T read(XMLStreamReader r) throws XMLStreamException;
    }

    private <T> CompletableFuture<T> call(String op, Content content, Reply<T> reply) {
        if (closed) {
            return CompletableFuture.failedFuture(new ConnectionLostException("the connection to " + uri + " is closed", null));
        }
        byte[] body;
        try {
            body = envelope(op, content);
        } catch (XMLStreamException | RuntimeException e) {
            // failed on the serial executor too: the caller's I/O-thread-only state is touched there alone
            // (what a Submit cannot write is a task that is not one: the dispatcher's INVALID_TASK)
            FalkonException unwritable = new FalkonException(op.equals("Submit") ? ErrorCode.INVALID_TASK : null,
                    "cannot write the " + op + " request: " + e.getMessage());
            return CompletableFuture.supplyAsync(() -> {
                throw new CompletionException(unwritable);
            }, serial);
        }
        HttpRequest.Builder req = HttpRequest.newBuilder(uri).timeout(timeout.plusSeconds(POLL_WAIT_SECONDS + 60))
                .header("Content-Type", "text/xml; charset=UTF-8").header("SOAPAction", "\"" + NS + ":" + op + "\"")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (token.required()) {
            req.header(HttpAuth.AUTHORIZATION, "Bearer " + token.value());
        }
        // completed on the serial executor: the Connection contract (the caller's I/O-thread-only state)
        return http.sendAsync(req.build(), HttpResponse.BodyHandlers.ofByteArray()).handleAsync((resp, err) -> {
            if (err != null) {
                Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
                throw new CompletionException(new ConnectionLostException(op + " to " + uri + " failed: " + cause,
                        cause));
            }
            try {
                return parse(op, resp, reply);
            } catch (XMLStreamException | RuntimeException e) {
                if (e instanceof FalkonException f) {
                    throw new CompletionException(f);
                }
                throw new CompletionException(resp.statusCode() == 503
                        ? new FalkonException(ErrorCode.BUSY, op + " to " + uri + ": the service is busy (HTTP 503)")
                        : new FalkonException("unreadable " + op + " response from " + uri + " (HTTP "
                                + resp.statusCode() + "): " + e.getMessage(), e));
            }
        }, serial);
    }

    private String keyOf(long instanceId) {
        return keys.getOrDefault(instanceId, Long.toUnsignedString(instanceId, 16));
    }

    private static byte[] envelope(String op, Content content) throws XMLStreamException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream(512);
        XMLStreamWriter w = OUT.createXMLStreamWriter(buf, "UTF-8");
        w.writeStartDocument("UTF-8", "1.0");
        w.writeStartElement("s", "Envelope", SOAP11);
        w.writeNamespace("s", SOAP11);
        w.writeNamespace(PREFIX, NS);
        w.writeStartElement("s", "Body", SOAP11);
        w.writeStartElement(PREFIX, op, NS);
        content.write(w);
        w.writeEndElement();
        w.writeEndElement();
        w.writeEndElement();
        w.writeEndDocument();
        w.close();
        return buf.toByteArray();
    }

    private static <T> T parse(String op, HttpResponse<byte[]> resp, Reply<T> reply) throws XMLStreamException {
        XMLStreamReader r = IN.createXMLStreamReader(new ByteArrayInputStream(resp.body()));
        try {
            // Envelope, then Body (skipping a Header), then the response or a Fault
            r.nextTag();
            while (r.nextTag() == XMLStreamConstants.START_ELEMENT && !r.getLocalName().equals("Body")) {
                SoapXml.skipToEnd(r, "Envelope");
            }
            if (r.getEventType() != XMLStreamConstants.START_ELEMENT) {
                throw new XMLStreamException("no SOAP Body");
            }
            r.nextTag();
            if (r.getLocalName().equals("Fault")) {
                Fault f = fault(r);
                // 503: the service will take the same call later (over its memory budget, or busy)
                throw new FalkonException(f.code() != null ? f.code() : resp.statusCode() == 503 ? ErrorCode.BUSY
                        : null, "the dispatcher refused " + op + ": " + f.reason());
            }
            if (!r.getLocalName().equals(op + "Response")) {
                throw new XMLStreamException("expected " + op + "Response, got " + r.getLocalName());
            }
            return reply.read(r);
        } finally {
            r.close();
        }
    }

    /** A fault's reason and, when the service gave one, the protocol's error code. */
    private record Fault(String reason, ErrorCode code) {
    }

    /** Reads a fault: SOAP 1.1 faultstring and detail, or SOAP 1.2 Reason/Text and Detail. */
    private static Fault fault(XMLStreamReader r) throws XMLStreamException {
        String reason = "(no reason given)";
        ErrorCode code = null;
        while (r.nextTag() == XMLStreamConstants.START_ELEMENT) {
            switch (r.getLocalName()) {
                case "faultstring" -> reason = r.getElementText();
                case "Reason" -> {
                    while (r.nextTag() == XMLStreamConstants.START_ELEMENT) {
                        reason = r.getElementText();
                    }
                }
                case "detail", "Detail" -> {
                    while (r.nextTag() == XMLStreamConstants.START_ELEMENT) {
                        if (r.getLocalName().equals("errorCode") && NS.equals(r.getNamespaceURI())) {
                            code = errorCode(r.getElementText().strip());
                        } else {
                            SoapXml.skipToEnd(r, r.getLocalName());
                        }
                    }
                }
                default -> SoapXml.skipToEnd(r, "Fault");
            }
        }
        return new Fault(reason, code);
    }

    private static ErrorCode errorCode(String name) {
        for (ErrorCode c : ErrorCode.values()) {
            if (c.name().equals(name)) {
                return c;
            }
        }
        return ErrorCode.UNKNOWN; // a code from a newer dispatcher
    }

    /** Moves to the next child element; false at the parent's end tag. */
    private static boolean next(XMLStreamReader r) throws XMLStreamException {
        return r.nextTag() == XMLStreamConstants.START_ELEMENT;
    }

    @Override
    public String toString() {
        return "WsConnection[" + uri + "]";
    }
}
