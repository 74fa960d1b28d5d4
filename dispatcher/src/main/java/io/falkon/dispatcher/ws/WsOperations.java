package io.falkon.dispatcher.ws;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.protocol.Message;
import io.falkon.protocol.soap.SoapInputException;
import io.falkon.protocol.soap.SoapXml;
import org.apache.axiom.om.OMElement;
import org.apache.axiom.om.OMException;
import org.apache.axiom.om.ds.AbstractPushOMDataSource;
import org.apache.axiom.soap.SOAPEnvelope;
import org.apache.axiom.soap.SOAPFactory;
import org.apache.axis2.AxisFault;
import org.apache.axis2.context.MessageContext;
import org.apache.axis2.receivers.AbstractInOutMessageReceiver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.xml.namespace.QName;
import javax.xml.stream.XMLStreamConstants;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamReader;
import javax.xml.stream.XMLStreamWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.falkon.protocol.soap.SoapXml.NS;
import static io.falkon.protocol.soap.SoapXml.PREFIX;

/**
 * The five operations of the service, as one Axis2 message receiver. Requests are read by
 * streaming the body element with StAX (a bundle is never built as a tree); responses are written
 * straight to the output by a push data source. Anything wrong in a request becomes a SOAP fault
 * that names it; the service carries on.
 */
final class WsOperations extends AbstractInOutMessageReceiver {
    private static final Logger log = LoggerFactory.getLogger(WsOperations.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    static final List<String> NAMES = List.of("CreateInstance", "Submit", "GetStatus", "GetResults", "Destroy");

    private static final QName SOAP11_CLIENT = new QName("http://schemas.xmlsoap.org/soap/envelope/", "Client");
    private static final QName SOAP11_SERVER = new QName("http://schemas.xmlsoap.org/soap/envelope/", "Server");
    private static final QName SOAP12_SENDER = new QName("http://www.w3.org/2003/05/soap-envelope", "Sender");
    private static final QName SOAP12_RECEIVER = new QName("http://www.w3.org/2003/05/soap-envelope", "Receiver");

    private final WsGateway gateway;
    private final String servicePath;

    /** @param servicePath the service's path on the server, e.g. {@code /axis2/services/Falkon} */
    WsOperations(WsGateway gateway, String servicePath) {
        this.gateway = gateway;
        this.servicePath = servicePath;
    }

    /** Writes the content of a response element (between its start and end tags). */
    private interface Body {
        void write(XMLStreamWriter w) throws XMLStreamException;
    }

    @Override
    public void invokeBusinessLogic(MessageContext in, MessageContext out) throws AxisFault {
        String op = in.getAxisOperation().getName().getLocalPart();
        Body body;
        try {
            OMElement request = in.getEnvelope().getBody().getFirstElement();
            if (request == null) {
                throw WsFault.client("the SOAP body is empty (expected <" + op + "> in namespace " + NS + ")");
            }
            if (!NS.equals(request.getNamespaceURI())) {
                throw WsFault.client("<" + request.getLocalName() + "> is in namespace '" + request.getNamespaceURI()
                        + "', expected " + NS);
            }
            XMLStreamReader r = request.getXMLStreamReaderWithoutCaching();
            while (r.getEventType() != XMLStreamConstants.START_ELEMENT) {
                r.next();
            }
            body = switch (op) {
                case "CreateInstance" -> createInstance(r, in);
                case "Submit" -> submit(r);
                case "GetStatus" -> status(r);
                case "GetResults" -> results(r);
                case "Destroy" -> destroy(r);
                default -> throw WsFault.client("no operation " + op);
            };
        } catch (WsFault e) {
            throw fault(in, e.getMessage(), e.callersFault());
        } catch (SoapInputException e) {
            throw fault(in, e.getMessage(), true); // names the operation and the element already
        } catch (XMLStreamException | OMException e) {
            throw fault(in, op + ": malformed XML in the request: " + rootMessage(e), true);
        } catch (RuntimeException e) {
            log.warn("WS {} failed", op, e);
            throw fault(in, op + ": internal error: " + e, false);
        }
        SOAPFactory f = getSOAPFactory(in);
        SOAPEnvelope env = f.getDefaultEnvelope();
        QName name = new QName(NS, op + "Response", PREFIX);
        env.getBody().addChild(f.createOMElement(new Response(name, body), name));
        out.setEnvelope(env);
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage() == null ? t.toString() : t.getMessage();
    }

    private static AxisFault fault(MessageContext in, String reason, boolean callersFault) {
        QName code = in.isSOAP11() ? (callersFault ? SOAP11_CLIENT : SOAP11_SERVER)
                : (callersFault ? SOAP12_SENDER : SOAP12_RECEIVER);
        if (callersFault) {
            log.debug("WS fault: {}", reason);
        } else {
            log.warn("WS fault: {}", reason);
        }
        return new AxisFault(reason, code);
    }

    // ---- the operations --------------------------------------------------------------------

    private Body createInstance(XMLStreamReader r, MessageContext in) throws XMLStreamException {
        String clientName = "ws";
        long lease = 0;
        while (next(r, "CreateInstance")) {
            switch (r.getLocalName()) {
                case "clientName" -> clientName = r.getElementText();
                case "leaseSeconds" -> lease = SoapXml.parseLong(r.getElementText(), "CreateInstance: <leaseSeconds>");
                default -> throw unexpected("CreateInstance", r, "clientName, leaseSeconds");
            }
        }
        long[] made = gateway.createInstance(clientName, lease);
        String endpoint = endpoint(in);
        return w -> {
            w.writeStartElement(PREFIX, "instance", NS);
            SoapXml.text(w, "endpoint", endpoint);
            SoapXml.text(w, "key", WsGateway.key(made[0]));
            w.writeEndElement();
            SoapXml.text(w, "leaseSeconds", Long.toString(made[1]));
        };
    }

    /** The service's address as the caller reached it (its Host header), for the instance reference. */
    private String endpoint(MessageContext in) {
        Object headers = in.getProperty(MessageContext.TRANSPORT_HEADERS);
        String host = null;
        if (headers instanceof Map<?, ?> m) {
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if ("host".equalsIgnoreCase(String.valueOf(e.getKey()))) {
                    host = String.valueOf(e.getValue());
                }
            }
        }
        return "http://" + (host == null ? "127.0.0.1" : host) + servicePath;
    }

    private Body submit(XMLStreamReader r) throws XMLStreamException {
        Long key = null;
        int max = gateway.settings().maxBundle();
        List<SoapXml.ParsedTask> tasks = new ArrayList<>();
        while (next(r, "Submit")) {
            switch (r.getLocalName()) {
                case "key" -> key = WsGateway.parseKey(r.getElementText());
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
        long[] ids = gateway.submit(require(key, "Submit"), tasks);
        return w -> {
            SoapXml.text(w, "accepted", Integer.toString(ids.length));
            for (long id : ids) {
                SoapXml.text(w, "id", Long.toString(id));
            }
        };
    }

    private Body status(XMLStreamReader r) throws XMLStreamException {
        long key = 0;
        while (next(r, "GetStatus")) {
            if (r.getLocalName().equals("key")) {
                key = WsGateway.parseKey(r.getElementText());
            } else {
                throw unexpected("GetStatus", r, "key");
            }
        }
        WsGateway.Status st = gateway.status(key);
        ObjectNode doc;
        try {
            doc = (ObjectNode) JSON.readTree(st.json());
        } catch (java.io.IOException | ClassCastException e) {
            throw new IllegalStateException("the scheduler's status is not a JSON object", e);
        }
        if (st.unfetched() >= 0) {
            // what a WS caller sees of its instance: its lease here, and results waiting to be fetched
            doc.remove("unacknowledged");
            doc.put("unfetched", st.unfetched());
            doc.put("leaseSeconds", st.leaseSeconds());
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
    }

    private Body results(XMLStreamReader r) throws XMLStreamException {
        Long key = null;
        int max = gateway.settings().maxResults();
        int wait = 0;
        while (next(r, "GetResults")) {
            switch (r.getLocalName()) {
                case "key" -> key = WsGateway.parseKey(r.getElementText());
                case "max" -> max = (int) Math.min(Integer.MAX_VALUE, SoapXml.parseLong(r.getElementText(),
                        "GetResults: <max>"));
                case "waitSeconds" -> wait = (int) Math.min(Integer.MAX_VALUE, SoapXml.parseLong(r.getElementText(),
                        "GetResults: <waitSeconds>"));
                default -> throw unexpected("GetResults", r, "key, max, waitSeconds");
            }
        }
        WsGateway.Fetched fetched = gateway.results(require(key, "GetResults"), max, wait);
        return w -> {
            List<Message.DeliveredResult> results = fetched.results();
            for (int i = 0, n = results.size(); i < n; i++) {
                SoapXml.writeResult(w, results.get(i));
            }
            SoapXml.text(w, "outstanding", Long.toString(fetched.outstanding()));
        };
    }

    private Body destroy(XMLStreamReader r) throws XMLStreamException {
        Long key = null;
        while (next(r, "Destroy")) {
            if (r.getLocalName().equals("key")) {
                key = WsGateway.parseKey(r.getElementText());
            } else {
                throw unexpected("Destroy", r, "key");
            }
        }
        int cancelled = gateway.destroy(require(key, "Destroy"));
        return w -> SoapXml.text(w, "cancelled", Integer.toString(cancelled));
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

    private static long require(Long key, String op) {
        if (key == null) {
            throw WsFault.client(op + ": no <key> (the instance key CreateInstance returned)");
        }
        return key;
    }

    /** A response element whose content is written when Axis2 serializes the envelope. */
    private static final class Response extends AbstractPushOMDataSource {
        private final QName name;
        private final Body body;

        Response(QName name, Body body) {
            this.name = name;
            this.body = body;
        }

        @Override
        public boolean isDestructiveWrite() {
            return false;
        }

        @Override
        public void serialize(XMLStreamWriter w) throws XMLStreamException {
            w.writeStartElement(PREFIX, name.getLocalPart(), NS);
            w.writeNamespace(PREFIX, NS);
            body.write(w);
            w.writeEndElement();
        }
    }
}
