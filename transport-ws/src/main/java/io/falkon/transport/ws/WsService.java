package io.falkon.transport.ws;

import io.falkon.dispatcher.admission.Admission;
import io.falkon.protocol.auth.HttpAuth;
import io.falkon.protocol.soap.SoapInputException;
import org.apache.axiom.om.OMException;
import org.apache.axiom.om.OMXMLBuilderFactory;
import org.apache.axiom.soap.SOAPEnvelope;
import org.apache.axiom.soap.SOAPHeader;
import org.apache.axiom.soap.SOAPHeaderBlock;
import org.apache.axiom.soap.SOAPModelBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.xml.stream.XMLStreamException;
import java.io.ByteArrayInputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.falkon.protocol.soap.SoapXml.NS;

/**
 * One HTTP request to the WS interface, start to finish, independent of the HTTP server: the SOAP
 * envelope parsed with Axiom (Axis2's SOAP object model; DTDs refused), the caller authenticated —
 * here and nowhere else, from the {@code Authorization}/{@code X-Falkon-Token} HTTP header or the
 * {@code <f:token>} SOAP header the WSDL declares — then the envelope handed to the Axis2 engine
 * ({@link WsEngine}), which dispatches it to its operation, runs it and writes the response or the
 * fault. Faults name what the caller got wrong and never internal class names; internal errors are
 * logged once, with their stack trace, and answered with a Server fault.
 */
final class WsService {
    private static final Logger log = LoggerFactory.getLogger(WsService.class);
    static final String SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/";
    static final String SOAP12 = "http://www.w3.org/2003/05/soap-envelope";

    /** What the HTTP server hands over: the request's line, the headers that matter, its body. */
    record Request(String method, String path, String query, String contentType, String soapAction,
                   String authorization, String tokenHeader, byte[] body, String from) {
    }

    /** What goes back. */
    record Response(int status, String contentType, byte[] body, Map<String, String> headers) {
        static Response of(int status, String contentType, byte[] body) {
            return new Response(status, contentType, body, Map.of());
        }
    }

    private final WsEngine engine;
    private final Admission admission;
    private final String servicePath;
    /** Its address and WSDL, known once the port is bound; null until then. */
    private volatile Published published;
    private final AtomicBoolean internalErrorLogged = new AtomicBoolean();

    private record Published(String endpoint, byte[] wsdl) {
    }

    /** Made before the port is bound (the engine takes a moment to set up), published after. */
    WsService(WsGateway gateway, String servicePath) {
        this.admission = gateway.admission();
        this.engine = new WsEngine(new WsOperations(gateway), servicePath, this::classify);
        this.servicePath = servicePath;
    }

    /**
     * @param endpoint the service's address as configured (handed out in instance references and the
     *                 WSDL), never taken from a request's Host header
     */
    void publish(String endpoint, byte[] wsdl) {
        this.published = new Published(endpoint, wsdl);
    }

    CompletableFuture<Response> serve(Request req) {
        Published p = published;
        if (p == null) { // a caller between the bind and the address being known
            Response busy = fault(Soap.V11, 503, false, "the WS interface is starting; retry shortly");
            return done(new Response(503, busy.contentType(), busy.body(), Map.of("Retry-After", "1")));
        }
        if (!req.path().equals(servicePath) && !req.path().equals(servicePath + "/")) {
            return done(Response.of(404, "text/plain; charset=utf-8", ("no service at " + req.path() + "; the Falkon "
                    + "service is at " + servicePath + "\n").getBytes(StandardCharsets.UTF_8)));
        }
        if (req.method().equals("GET")) {
            if (admission.authenticate("ws " + req.from(), presented(req.authorization(), req.tokenHeader(), null))
                    == null) {
                return done(unauthorized(Soap.V11));
            }
            if (req.query() != null && req.query().equalsIgnoreCase("wsdl")) {
                return done(Response.of(200, "text/xml; charset=utf-8", p.wsdl()));
            }
            return done(Response.of(400, "text/plain; charset=utf-8",
                    ("POST SOAP requests here; the WSDL is at " + servicePath + "?wsdl\n").getBytes(StandardCharsets.UTF_8)));
        }
        if (!req.method().equals("POST")) {
            return done(Response.of(405, "text/plain; charset=utf-8", "GET ?wsdl or POST SOAP\n"
                    .getBytes(StandardCharsets.UTF_8)));
        }
        Soap soap = Soap.of(req.contentType());
        if (soap == null) {
            return done(fault(Soap.V11, 415, true, "Content-Type must be text/xml (SOAP 1.1) or application/soap+xml "
                    + "(SOAP 1.2), got '" + (req.contentType() == null ? "" : req.contentType()) + "'"));
        }
        // a token in the HTTP headers is checked before the body is looked at
        Admission.Credential who = null;
        String fromHttp = HttpAuth.presented(req.authorization(), req.tokenHeader());
        if (fromHttp != null) {
            who = admission.authenticate("ws " + req.from(), fromHttp);
            if (who == null) {
                return done(unauthorized(soap));
            }
        }
        try {
            return soap(req, soap, who, p.endpoint()).exceptionally(e -> failure(req, soap, e));
        } catch (RuntimeException | XMLStreamException e) {
            return done(failure(req, soap, e));
        }
    }

    /** @param who the caller if the HTTP headers authenticated it, else null (the SOAP header must) */
    private CompletableFuture<Response> soap(Request req, Soap soap, Admission.Credential who, String endpoint)
            throws XMLStreamException {
        SOAPEnvelope env;
        String headerToken = null;
        String notUnderstood = null;
        try {
            env = envelope(req, soap);
            SOAPHeader header = env.getHeader();
            Iterator<SOAPHeaderBlock> blocks = header == null ? null : header.examineAllHeaderBlocks();
            while (blocks != null && blocks.hasNext()) {
                SOAPHeaderBlock b = blocks.next();
                if (NS.equals(b.getNamespaceURI()) && b.getLocalName().equals("token")) {
                    headerToken = b.getText().strip();
                    b.setProcessed();
                } else if (b.getMustUnderstand() && notUnderstood == null) {
                    notUnderstood = "header <" + b.getLocalName() + "> in namespace '" + b.getNamespaceURI()
                            + "' must be understood, and this service does not know it";
                }
            }
        } catch (RuntimeException e) {
            // not an envelope: a caller not yet known to hold the token learns nothing more than 401
            if (who == null && admission.authenticate("ws " + req.from(), null) == null) {
                return done(unauthorized(soap));
            }
            throw e;
        }
        if (who == null) {
            who = admission.authenticate("ws " + req.from(), headerToken);
            if (who == null) {
                return done(unauthorized(soap));
            }
        }
        if (notUnderstood != null) {
            return done(fault(soap, soap.clientStatus, true, notUnderstood));
        }
        return engine.receive(env, soap, soap.action(req), new WsOperations.Call(who, req.from(), endpoint));
    }

    private static SOAPEnvelope envelope(Request req, Soap soap) {
        if (req.body().length == 0) {
            throw WsFault.client("the request has no body (expected a SOAP envelope)");
        }
        SOAPModelBuilder b = OMXMLBuilderFactory.createSOAPModelBuilder(new ByteArrayInputStream(req.body()),
                charset(req.contentType()).name());
        SOAPEnvelope env = b.getSOAPEnvelope();
        String ns = env.getNamespaceURI();
        if (!soap.namespace.equals(ns)) {
            throw WsFault.client("the envelope is SOAP " + (SOAP12.equals(ns) ? "1.2" : SOAP11.equals(ns) ? "1.1"
                    : "of unknown version '" + ns + "'") + " but the Content-Type says SOAP " + soap.version);
        }
        return env;
    }

    private static String presented(String authorization, String tokenHeader, String soapHeader) {
        String fromHttp = HttpAuth.presented(authorization, tokenHeader);
        return fromHttp != null ? fromHttp : soapHeader;
    }

    private static Charset charset(String contentType) {
        if (contentType != null) {
            for (String part : contentType.split(";")) {
                String p = part.strip();
                if (p.regionMatches(true, 0, "charset=", 0, 8)) {
                    try {
                        return Charset.forName(p.substring(8).replace("\"", "").strip());
                    } catch (IllegalArgumentException e) {
                        throw WsFault.client("unknown charset in the Content-Type: " + p.substring(8));
                    }
                }
            }
        }
        return StandardCharsets.UTF_8;
    }

    // ---- responses -------------------------------------------------------------------------

    /** The fault for a request that failed before the engine had it (see {@link #classify}). */
    private Response failure(Request req, Soap soap, Throwable e) {
        return engine.fault(soap, classify(e, req.from()));
    }

    /**
     * What a failed request's exception means to its caller. A caller's fault is logged as a bad
     * request (rate-limited, with where it came from), as every transport logs what it refuses: a
     * DOCTYPE, a SOAPAction that does not match the body, a task that is not one.
     */
    private WsEngine.Fault classify(Throwable e, String from) {
        Throwable c = e;
        while (c instanceof CompletionException && c.getCause() != null) {
            c = c.getCause();
        }
        if (c instanceof WsFault f && f.retryLater()) {
            return new WsEngine.Fault(503, false, f.getMessage(), f.code(), Map.of("Retry-After", "1"));
        }
        if (c instanceof WsFault f) {
            if (f.callersFault()) {
                admission.badRequests().refused("ws " + from, f.getMessage());
            }
            return new WsEngine.Fault(f.callersFault() ? WsEngine.Fault.CALLERS : 500, f.callersFault(), f.getMessage(),
                    f.code(), Map.of());
        }
        if (c instanceof SoapInputException) {
            admission.badRequests().refused("ws " + from, c.getMessage());
            return new WsEngine.Fault(WsEngine.Fault.CALLERS, true, c.getMessage(), null, Map.of()); // names the element
        }
        if (c instanceof XMLStreamException || c instanceof OMException) {
            String why = "the request is not a well-formed SOAP envelope: " + rootMessage(c);
            admission.badRequests().refused("ws " + from, why);
            return new WsEngine.Fault(WsEngine.Fault.CALLERS, true, why, null, Map.of());
        }
        if (internalErrorLogged.compareAndSet(false, true)) {
            log.error("WS request failed inside the dispatcher (logged once; later ones count as bad requests)", c);
        } else {
            admission.badRequests().refused("ws", "internal error: " + rootMessage(c));
        }
        return new WsEngine.Fault(500, false, "internal error in the dispatcher (see its log)", null, Map.of());
    }

    /** The innermost message, without the class names some parsers prefix to it. */
    static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        String m = t.getMessage() == null ? "malformed" : t.getMessage();
        m = m.replaceAll("(?:[a-z][a-z0-9_]*\\.)+[A-Za-z0-9_$]+(?:Exception|Error): ?", "");
        int nl = m.indexOf('\n');
        String first = (nl < 0 ? m : m.substring(0, nl)).strip();
        String where = nl < 0 ? "" : m.substring(nl).replaceAll("\\s+", " ").strip();
        return first + (where.isEmpty() ? "" : " (" + where.replace("{unknown-source}", "").strip() + ")");
    }

    private Response unauthorized(Soap soap) {
        return engine.fault(soap, new WsEngine.Fault(401, true, "authentication required: present the dispatcher's "
                + "token in an 'Authorization: Bearer TOKEN' header, an 'X-Falkon-Token' header, or a <f:token> SOAP "
                + "header (docs/ws.md)", null, Map.of("WWW-Authenticate", HttpAuth.CHALLENGE)));
    }

    /** A SOAP fault, written by the engine: Client/Sender when the caller is at fault, Server/Receiver when not. */
    Response fault(Soap soap, int status, boolean callers, String reason) {
        return engine.fault(soap, new WsEngine.Fault(status, callers, reason, null, Map.of()));
    }

    private static CompletableFuture<Response> done(Response r) {
        return CompletableFuture.completedFuture(r);
    }

    /** The two SOAP versions, as the Content-Type tells them apart. */
    enum Soap {
        V11("1.1", SOAP11, "text/xml; charset=utf-8", 500),
        V12("1.2", SOAP12, "application/soap+xml; charset=utf-8", 400);

        final String version;
        final String namespace;
        final String contentType;
        /** HTTP status of a fault that is the caller's (SOAP 1.1: 500 for every fault; 1.2: 400 for Sender). */
        final int clientStatus;

        Soap(String version, String namespace, String contentType, int clientStatus) {
            this.version = version;
            this.namespace = namespace;
            this.contentType = contentType;
            this.clientStatus = clientStatus;
        }

        static Soap of(String contentType) {
            if (contentType == null) {
                return null;
            }
            String media = contentType.split(";")[0].strip().toLowerCase();
            return switch (media) {
                case "text/xml" -> V11;
                case "application/soap+xml" -> V12;
                default -> null;
            };
        }

        /** The requested action: the SOAPAction header (1.1), or the Content-Type's action parameter (1.2). */
        String action(Request req) {
            String a = null;
            if (this == V11) {
                a = req.soapAction();
            } else if (req.contentType() != null) {
                for (String part : req.contentType().split(";")) {
                    String p = part.strip();
                    if (p.regionMatches(true, 0, "action=", 0, 7)) {
                        a = p.substring(7);
                    }
                }
            }
            return a == null ? null : a.strip().replace("\"", "");
        }
    }
}
