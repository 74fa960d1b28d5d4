package io.falkon.transport.ws;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.falkon.dispatcher.admission.Admission;
import io.falkon.protocol.Message;
import io.falkon.protocol.soap.SoapXml;

import javax.xml.stream.XMLStreamConstants;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamReader;
import javax.xml.stream.XMLStreamWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static io.falkon.protocol.soap.SoapXml.NS;

/**
 * The operations of the service. Each reads its request element by streaming it with StAX (a
 * bundle is never built as a tree), asks the {@link WsGateway}, and returns the response element's
 * content as a {@link Body} written later, straight to the output. Anything wrong in a request is a
 * {@link WsFault} that names it.
 */
final class WsOperations {
    static final List<String> NAMES = List.of("CreateInstance", "Submit", "GetStatus", "GetResults", "Destroy",
            "Halt", "CancelTasks");
    /** The most task ids one CancelTasks names (a request's size is bounded besides). */
    static final int MAX_CANCEL_IDS = 100_000;

    private final WsGateway gateway;

    WsOperations(WsGateway gateway) {
        this.gateway = gateway;
    }

    /** Writes the content of a response element (between its start and end tags). */
    interface Body {
        void write(XMLStreamWriter w) throws XMLStreamException;
    }

    /** Who is calling: an authenticated request, and where from (for logs). */
    record Call(Admission.Credential who, String from, String endpoint) {
    }

    /** An operation whose request has been read whole and checked, ready to run. */
    interface Prepared {
        CompletableFuture<Body> run();
    }

    /**
     * Reads operation {@code op}'s request element (the reader is on it) and checks it, without
     * running anything yet: the caller may still refuse the request as a whole (something else
     * after it in the body).
     */
    Prepared parse(String op, XMLStreamReader r, Call call) throws XMLStreamException {
        return switch (op) {
            case "CreateInstance" -> createInstance(r, call);
            case "Submit" -> submit(r, call);
            case "GetStatus" -> status(r, call);
            case "GetResults" -> results(r, call);
            case "Destroy" -> destroy(r, call);
            case "Halt" -> halt(r, call);
            case "CancelTasks" -> cancelTasks(r, call);
            default -> throw WsFault.client("no operation " + op);
        };
    }

    private Prepared createInstance(XMLStreamReader r, Call call) throws XMLStreamException {
        String clientName = "ws";
        long lease = 0;
        while (next(r, "CreateInstance")) {
            switch (r.getLocalName()) {
                case "clientName" -> clientName = r.getElementText();
                case "leaseSeconds" -> lease = SoapXml.parseBounded(r.getElementText(), "CreateInstance: <leaseSeconds>",
                        0, 0xFFFF_FFFFL);
                default -> throw unexpected("CreateInstance", r, "clientName, leaseSeconds");
            }
        }
        String name = clientName;
        long leaseSeconds = lease;
        return () -> gateway.createInstance(call.who(), call.from(), name, leaseSeconds).thenApply(made -> w -> {
            w.writeStartElement(SoapXml.PREFIX, "instance", NS);
            SoapXml.text(w, "endpoint", call.endpoint());
            SoapXml.text(w, "key", made.key());
            w.writeEndElement();
            SoapXml.text(w, "leaseSeconds", Long.toString(made.leaseSeconds()));
        });
    }

    private Prepared submit(XMLStreamReader r, Call call) throws XMLStreamException {
        WsGateway.Key key = null;
        int max = gateway.settings().maxBundle();
        List<SoapXml.ParsedTask> tasks = new ArrayList<>();
        while (next(r, "Submit")) {
            switch (r.getLocalName()) {
                case "key" -> key = WsGateway.parseKey(r.getElementText(), "Submit");
                case "task" -> {
                    if (tasks.size() == max) {
                        throw WsFault.client("Submit: the bundle has more than " + max
                                + " tasks, the maximum per Submit (split it, or raise --ws-max-bundle)");
                    }
                    tasks.add(SoapXml.readTask(r, "Submit", tasks.size()));
                }
                default -> throw unexpected("Submit", r, "key, task");
            }
        }
        WsGateway.Key k = require(key, "Submit");
        return () -> gateway.submit(call.who(), call.from(), k, tasks).thenApply(ids -> w -> {
            SoapXml.text(w, "accepted", Integer.toString(ids.length));
            for (long id : ids) {
                SoapXml.text(w, "id", Long.toString(id));
            }
        });
    }

    private Prepared status(XMLStreamReader r, Call call) throws XMLStreamException {
        WsGateway.Key key = null;
        while (next(r, "GetStatus")) {
            if (r.getLocalName().equals("key")) {
                key = WsGateway.parseKey(r.getElementText(), "GetStatus");
            } else {
                throw unexpected("GetStatus", r, "key");
            }
        }
        WsGateway.Key k = key;
        return () -> gateway.status(call.who(), call.from(), k).thenApply(st -> {
            ObjectNode doc = (ObjectNode) st.document();
            if (st.unfetched() >= 0) {
                // what a WS caller sees of its instance: results waiting to be fetched
                doc.remove("unacknowledged");
                doc.put("unfetched", st.unfetched());
                doc.put("waitingPolls", st.waitingPolls());
            }
            String document = doc.toString();
            return w -> {
                for (String field : List.of("queued", "running", "completed", "failed")) {
                    SoapXml.text(w, field, Long.toString(doc.path(field).asLong()));
                }
                if (st.unfetched() >= 0) {
                    SoapXml.text(w, "unfetched", Long.toString(st.unfetched()));
                }
                SoapXml.text(w, "document", document);
            };
        });
    }

    private Prepared results(XMLStreamReader r, Call call) throws XMLStreamException {
        WsGateway.Key key = null;
        int max = gateway.settings().maxResults();
        int wait = 0;
        Long ack = null;
        while (next(r, "GetResults")) {
            switch (r.getLocalName()) {
                case "key" -> key = WsGateway.parseKey(r.getElementText(), "GetResults");
                case "max" -> max = (int) SoapXml.parseBounded(r.getElementText(), "GetResults: <max>", 1,
                        Integer.MAX_VALUE);
                case "waitSeconds" -> wait = (int) SoapXml.parseBounded(r.getElementText(), "GetResults: <waitSeconds>",
                        0, Integer.MAX_VALUE);
                case "ack" -> ack = SoapXml.parseBounded(r.getElementText(), "GetResults: <ack>", 0, Long.MAX_VALUE);
                default -> throw unexpected("GetResults", r, "key, max, waitSeconds, ack");
            }
        }
        WsGateway.Key k = require(key, "GetResults");
        int most = max;
        int waitSeconds = wait;
        Long acked = ack;
        return () -> gateway.results(call.who(), call.from(), k, most, waitSeconds, acked)
                .thenApply(fetched -> w -> {
                    List<Message.DeliveredResult> results = fetched.results();
                    for (int i = 0, n = results.size(); i < n; i++) {
                        SoapXml.writeResult(w, results.get(i));
                    }
                    SoapXml.text(w, "outstanding", Long.toString(fetched.outstanding()));
                });
    }

    private Prepared destroy(XMLStreamReader r, Call call) throws XMLStreamException {
        WsGateway.Key key = null;
        while (next(r, "Destroy")) {
            if (r.getLocalName().equals("key")) {
                key = WsGateway.parseKey(r.getElementText(), "Destroy");
            } else {
                throw unexpected("Destroy", r, "key");
            }
        }
        WsGateway.Key k = require(key, "Destroy");
        return () -> gateway.destroy(call.who(), call.from(), k)
                .thenApply(cancelled -> w -> SoapXml.text(w, "cancelled", Integer.toString(cancelled)));
    }

    private Prepared halt(XMLStreamReader r, Call call) throws XMLStreamException {
        WsGateway.Key key = null;
        while (next(r, "Halt")) {
            if (r.getLocalName().equals("key")) {
                key = WsGateway.parseKey(r.getElementText(), "Halt");
            } else {
                throw unexpected("Halt", r, "key");
            }
        }
        WsGateway.Key k = require(key, "Halt");
        return () -> gateway.halt(call.who(), call.from(), k)
                .thenApply(cancelled -> w -> SoapXml.text(w, "cancelled", Integer.toString(cancelled)));
    }

    private Prepared cancelTasks(XMLStreamReader r, Call call) throws XMLStreamException {
        WsGateway.Key key = null;
        long[] ids = new long[16];
        int n = 0;
        while (next(r, "CancelTasks")) {
            switch (r.getLocalName()) {
                case "key" -> key = WsGateway.parseKey(r.getElementText(), "CancelTasks");
                case "taskId" -> {
                    if (n == MAX_CANCEL_IDS) {
                        throw WsFault.client("CancelTasks: more than " + MAX_CANCEL_IDS + " taskId elements");
                    }
                    String text = r.getElementText().trim();
                    try {
                        long id = Long.parseUnsignedLong(text);
                        ids = n == ids.length ? java.util.Arrays.copyOf(ids, n * 2) : ids;
                        ids[n++] = id;
                    } catch (NumberFormatException e) {
                        throw WsFault.client("CancelTasks: taskId[" + n + "] '" + io.falkon.protocol.LogSafe.text(text)
                                + "' is not a task id (an unsigned 64-bit number)");
                    }
                }
                default -> throw unexpected("CancelTasks", r, "key or taskId");
            }
        }
        WsGateway.Key k = require(key, "CancelTasks");
        if (n == 0) {
            throw WsFault.client("CancelTasks: no taskId given");
        }
        long[] named = java.util.Arrays.copyOf(ids, n);
        return () -> gateway.cancelTasks(call.who(), call.from(), k, named)
                .thenApply(cancelled -> w -> SoapXml.text(w, "cancelled", Integer.toString(cancelled)));
    }

    // ---- reading helpers -------------------------------------------------------------------

    /** Moves to the next child element of the request; false at the request's end tag. */
    private static boolean next(XMLStreamReader r, String op) throws XMLStreamException {
        int e = r.nextTag();
        if (e == XMLStreamConstants.START_ELEMENT && !NS.equals(r.getNamespaceURI())) {
            throw WsFault.client(op + ": <" + r.getLocalName() + "> is in namespace '"
                    + (r.getNamespaceURI() == null ? "" : r.getNamespaceURI()) + "', expected " + NS);
        }
        return e == XMLStreamConstants.START_ELEMENT;
    }

    private static WsFault unexpected(String op, XMLStreamReader r, String expected) {
        return WsFault.client(op + ": unexpected element <" + r.getLocalName() + "> (expected " + expected + ")");
    }

    private static WsGateway.Key require(WsGateway.Key key, String op) {
        if (key == null) {
            throw WsFault.client(op + ": no <key> (the instance key CreateInstance returned)");
        }
        return key;
    }
}
