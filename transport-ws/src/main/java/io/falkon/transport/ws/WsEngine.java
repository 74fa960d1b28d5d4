package io.falkon.transport.ws;

import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.soap.SoapXml;
import org.apache.axiom.om.OMAbstractFactory;
import org.apache.axiom.om.OMElement;
import org.apache.axiom.om.OMNode;
import org.apache.axiom.om.ds.AbstractPushOMDataSource;
import org.apache.axiom.soap.SOAPBody;
import org.apache.axiom.soap.SOAPEnvelope;
import org.apache.axiom.soap.SOAPFactory;
import org.apache.axis2.AxisFault;
import org.apache.axis2.Constants;
import org.apache.axis2.addressing.EndpointReference;
import org.apache.axis2.context.ConfigurationContext;
import org.apache.axis2.context.ConfigurationContextFactory;
import org.apache.axis2.context.MessageContext;
import org.apache.axis2.context.SessionContext;
import org.apache.axis2.description.AxisOperation;
import org.apache.axis2.description.AxisService;
import org.apache.axis2.description.InOutAxisOperation;
import org.apache.axis2.description.TransportInDescription;
import org.apache.axis2.description.TransportOutDescription;
import org.apache.axis2.engine.AbstractDispatcher;
import org.apache.axis2.engine.AxisConfiguration;
import org.apache.axis2.engine.AxisEngine;
import org.apache.axis2.engine.DispatchPhase;
import org.apache.axis2.engine.MessageReceiver;
import org.apache.axis2.engine.Phase;
import org.apache.axis2.handlers.AbstractHandler;
import org.apache.axis2.kernel.OutTransportInfo;
import org.apache.axis2.kernel.TransportListener;
import org.apache.axis2.kernel.TransportSender;
import org.apache.axis2.util.MessageContextBuilder;

import javax.xml.namespace.QName;
import javax.xml.stream.XMLStreamConstants;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamReader;
import javax.xml.stream.XMLStreamWriter;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;

import static io.falkon.protocol.soap.SoapXml.NS;
import static io.falkon.protocol.soap.SoapXml.PREFIX;

/**
 * The Apache Axis2 engine behind the WS interface. Netty keeps the connections (and every limit
 * on them); each request's envelope is handed to {@link AxisEngine#receive} as a {@link
 * MessageContext} through a transport of our own, as Axis2's transports are written: its Dispatch
 * phase finds the operation ({@link OperationDispatcher}: by the body's element, checked against
 * the SOAPAction), the operation's {@link MessageReceiver} runs it, and {@link AxisEngine#send} or
 * {@link AxisEngine#sendFault} hands the answer to {@link ReplySender}, which turns it into the HTTP
 * response. Axis2 builds the response and fault envelopes (SOAP 1.1 or 1.2, as the request).
 *
 * <p>Operations complete asynchronously (the scheduler answers on its own thread): the receiver
 * starts one and returns, and the answer is sent through the engine when it is ready, so no thread
 * waits for the scheduler.
 */
final class WsEngine {
    private static final String TRANSPORT = "falkon-netty";
    /** The request's {@link WsOperations.Call} (who, from where), on its message context. */
    private static final String CALL = "falkon.call";

    /**
     * How a failure becomes a fault: the HTTP status ({@link #CALLERS}: what a caller's fault gets in
     * the request's SOAP version), whose fault, the reason, the protocol's code, extra HTTP headers.
     */
    record Fault(int status, boolean callers, String reason, ErrorCode code, Map<String, String> headers) {
        static final int CALLERS = -1;
    }

    private final WsOperations operations;
    private final BiFunction<Throwable, String, Fault> classify;
    private final ConfigurationContext context;
    private final TransportInDescription in;
    private final TransportOutDescription out;
    private final String to;

    /**
     * @param classify what a failed request's exception means to the caller, given where it came from
     *                 (and logs it as the service's log policy says); called once per failed request
     */
    WsEngine(WsOperations operations, String servicePath, BiFunction<Throwable, String, Fault> classify) {
        this.operations = operations;
        this.classify = classify;
        this.to = servicePath;
        try {
            this.context = ConfigurationContextFactory.createEmptyConfigurationContext();
            AxisConfiguration config = context.getAxisConfiguration();
            DispatchPhase dispatch = new DispatchPhase("Dispatch");
            OperationDispatcher dispatcher = new OperationDispatcher();
            dispatcher.initDispatcher();
            dispatch.addHandler(dispatcher);
            List<Phase> inFlow = new ArrayList<>();
            inFlow.add(dispatch);
            config.setInPhasesUptoAndIncludingPostDispatch(inFlow);
            this.in = new TransportInDescription(TRANSPORT);
            in.setReceiver(new NettyListener());
            this.out = new TransportOutDescription(TRANSPORT);
            out.setSender(new ReplySender());
            config.addTransportIn(in);
            config.addTransportOut(out);
            AxisService service = new AxisService("Falkon");
            for (String name : WsOperations.NAMES) {
                AxisOperation op = new InOutAxisOperation(new QName(NS, name));
                op.setMessageReceiver(new OperationReceiver());
                op.setSoapAction(NS + ":" + name);
                service.addOperation(op);
            }
            config.addService(service);
        } catch (AxisFault e) {
            throw new IllegalStateException("cannot set up the Axis2 engine: " + e.getMessage(), e);
        }
    }

    /**
     * Runs one authenticated request through the engine: dispatch to its operation, run it, and
     * the response or the fault. Completes with the HTTP response, never exceptionally.
     */
    CompletableFuture<WsService.Response> receive(SOAPEnvelope envelope, WsService.Soap soap, String action,
                                                  WsOperations.Call call) {
        Reply reply = new Reply(soap);
        MessageContext mc = context(envelope, reply);
        mc.setSoapAction(action);
        mc.setProperty(CALL, call);
        try {
            AxisEngine.receive(mc); // a dispatch problem has been answered already (the dispatcher aborts)
        } catch (AxisFault | RuntimeException e) {
            fail(mc, e);
        }
        return reply.done;
    }

    /** The fault for a request refused before it got to the engine (its envelope unreadable, no token). */
    WsService.Response fault(WsService.Soap soap, Fault f) {
        Reply reply = new Reply(soap);
        SOAPFactory factory = factory(soap);
        sendFault(context(factory.getDefaultEnvelope(), reply), f);
        return reply.done.join();
    }

    private MessageContext context(SOAPEnvelope envelope, Reply reply) {
        MessageContext mc = context.createMessageContext();
        mc.setTransportIn(in);
        mc.setTransportOut(out);
        mc.setIncomingTransportName(TRANSPORT);
        mc.setServerSide(true);
        mc.setTo(new EndpointReference(to));
        mc.setProperty(Constants.OUT_TRANSPORT_INFO, reply);
        try {
            mc.setEnvelope(envelope);
        } catch (AxisFault e) {
            throw new IllegalStateException(e);
        }
        return mc;
    }

    private static SOAPFactory factory(WsService.Soap soap) {
        return soap == WsService.Soap.V11 ? OMAbstractFactory.getSOAP11Factory() : OMAbstractFactory.getSOAP12Factory();
    }

    /** A request that failed at any point: classified, then answered with a fault through the engine. */
    private void fail(MessageContext mc, Throwable e) {
        WsOperations.Call call = (WsOperations.Call) mc.getProperty(CALL);
        sendFault(mc, classify.apply(e, call == null ? "?" : call.from()));
    }

    private static void sendFault(MessageContext mc, Fault f) {
        Reply reply = (Reply) mc.getProperty(Constants.OUT_TRANSPORT_INFO);
        reply.status = f.status() == Fault.CALLERS ? reply.soap.clientStatus : f.status();
        reply.headers = f.headers();
        boolean v11 = reply.soap == WsService.Soap.V11;
        String ns = reply.soap.namespace;
        QName code = new QName(ns, f.callers() ? (v11 ? "Client" : "Sender") : (v11 ? "Server" : "Receiver"),
                "soapenv");
        OMElement detail = null;
        if (f.code() != null) {
            SOAPFactory factory = factory(reply.soap);
            detail = factory.createOMElement("errorCode", factory.createOMNamespace(NS, "f"));
            detail.setText(f.code().name());
        }
        try {
            AxisFault fault = new AxisFault(code, SoapXml.xmlSafe(f.reason()), null, null, detail);
            AxisEngine.sendFault(MessageContextBuilder.createFaultMessageContext(mc, fault));
        } catch (AxisFault | RuntimeException e) {
            reply.done.completeExceptionally(e);
        }
    }

    /**
     * Finds the operation by the body's element, as the WSDL's document/literal binding says, and
     * checks a SOAPAction given against it. What does not fit is answered here with a fault that
     * names what is wrong, and the flow stops (no generic "endpoint not found" from the engine).
     */
    private final class OperationDispatcher extends AbstractDispatcher {
        private AxisService service;

        @Override
        public void initDispatcher() {
            init(new org.apache.axis2.description.HandlerDescription("FalkonOperationDispatcher"));
        }

        @Override
        public InvocationResponse invoke(MessageContext mc) throws AxisFault {
            try {
                check(mc);
            } catch (WsFault e) {
                fail(mc, e);
                return InvocationResponse.ABORT;
            }
            return super.invoke(mc);
        }

        private void check(MessageContext mc) {
            SOAPBody body = mc.getEnvelope().getBody();
            OMElement request = body == null ? null : body.getFirstElement();
            if (request == null) {
                throw WsFault.client("the SOAP Body is empty (expected one of " + String.join(", ", WsOperations.NAMES)
                        + " in namespace " + NS + ")");
            }
            String op = request.getLocalName();
            if (!NS.equals(request.getNamespaceURI()) || !WsOperations.NAMES.contains(op)) {
                throw WsFault.client("<" + op + "> in namespace '" + request.getNamespaceURI() + "' is not an operation "
                        + "of this service (" + String.join(", ", WsOperations.NAMES) + " in " + NS + ")");
            }
            String action = mc.getSoapAction();
            if (action != null && !action.isEmpty() && !action.equals(NS + ":" + op) && !action.equals(op)) {
                throw WsFault.client("the SOAPAction '" + action + "' does not match the body's <" + op + "> (expected "
                        + NS + ":" + op + ")");
            }
        }

        @Override
        public AxisService findService(MessageContext mc) {
            if (service == null) {
                service = mc.getConfigurationContext().getAxisConfiguration().getServices().get("Falkon");
            }
            return service;
        }

        @Override
        public AxisOperation findOperation(AxisService svc, MessageContext mc) {
            OMElement request = mc.getEnvelope().getBody().getFirstElement();
            return svc.getOperation(new QName(NS, request.getLocalName()));
        }
    }

    /**
     * Runs an operation: its request element streamed with StAX (a bundle is never built as a tree),
     * checked whole, then run; the response element written straight from the operation's result
     * when the engine serializes the envelope.
     */
    private final class OperationReceiver implements MessageReceiver {
        @Override
        public void receive(MessageContext mc) {
            String op = mc.getAxisOperation().getName().getLocalPart();
            WsOperations.Prepared prepared;
            try {
                OMElement request = mc.getEnvelope().getBody().getFirstElement();
                XMLStreamReader r = request.getXMLStreamReaderWithoutCaching();
                while (r.getEventType() != XMLStreamConstants.START_ELEMENT) {
                    r.next();
                }
                prepared = operations.parse(op, r, (WsOperations.Call) mc.getProperty(CALL));
                // one operation per request: what follows it in the body would otherwise go unseen
                for (OMNode n = request.getNextOMSibling(); n != null; n = n.getNextOMSibling()) {
                    if (n instanceof OMElement second) {
                        throw WsFault.client("the SOAP Body holds <" + second.getLocalName() + "> after <" + op
                                + ">: one operation per request");
                    }
                }
            } catch (XMLStreamException | RuntimeException e) {
                fail(mc, e);
                return;
            }
            prepared.run().whenComplete((body, e) -> {
                if (e != null) {
                    fail(mc, e);
                } else {
                    respond(mc, op, body);
                }
            });
        }

        private void respond(MessageContext mc, String op, WsOperations.Body body) {
            try {
                MessageContext reply = MessageContextBuilder.createOutMessageContext(mc);
                SOAPFactory factory = (SOAPFactory) mc.getEnvelope().getOMFactory();
                SOAPEnvelope env = factory.getDefaultEnvelope();
                env.getBody().addChild(factory.createOMElement(new ResponseElement(op, body), op + "Response",
                        factory.createOMNamespace(NS, PREFIX)));
                reply.setEnvelope(env);
                AxisEngine.send(reply);
            } catch (AxisFault | RuntimeException e) {
                fail(mc, e);
            }
        }
    }

    /** The response element, written when the envelope is serialized. */
    private static final class ResponseElement extends AbstractPushOMDataSource {
        private final String op;
        private final WsOperations.Body body;

        ResponseElement(String op, WsOperations.Body body) {
            this.op = op;
            this.body = body;
        }

        @Override
        public boolean isDestructiveWrite() {
            return true; // written once
        }

        @Override
        public void serialize(XMLStreamWriter w) throws XMLStreamException {
            w.writeStartElement(PREFIX, op + "Response", NS);
            w.writeNamespace(PREFIX, NS);
            body.write(w);
            w.writeEndElement();
        }
    }

    /** Where a request's answer goes: the HTTP response it becomes. */
    private static final class Reply implements OutTransportInfo {
        final WsService.Soap soap;
        final CompletableFuture<WsService.Response> done = new CompletableFuture<>();
        int status = 200;
        Map<String, String> headers = Map.of();

        Reply(WsService.Soap soap) {
            this.soap = soap;
        }

        @Override
        public void setContentType(String contentType) {
            // the HTTP response's Content-Type follows the request's SOAP version
        }
    }

    /** The transport's sending half: the envelope Axis2 built, serialized into the HTTP response. */
    private static final class ReplySender extends AbstractHandler implements TransportSender {
        @Override
        public InvocationResponse invoke(MessageContext mc) throws AxisFault {
            Reply reply = (Reply) mc.getProperty(Constants.OUT_TRANSPORT_INFO);
            ByteArrayOutputStream buf = new ByteArrayOutputStream(1024);
            try {
                mc.getEnvelope().serializeAndConsume(buf); // streams the response element; no tree is built
            } catch (XMLStreamException e) {
                throw AxisFault.makeFault(e);
            }
            reply.done.complete(new WsService.Response(reply.status, reply.soap.contentType, buf.toByteArray(),
                    reply.headers));
            return InvocationResponse.CONTINUE;
        }

        @Override
        public void init(ConfigurationContext context, TransportOutDescription description) {
        }

        @Override
        public void cleanup(MessageContext mc) {
        }

        @Override
        public void stop() {
        }
    }

    /**
     * The transport's receiving half, as Axis2 registers it: Netty listens (WsTransport), so this
     * one starts nothing and hands out no addresses of its own.
     */
    private static final class NettyListener implements TransportListener {
        @Override
        public void init(ConfigurationContext context, TransportInDescription description) {
        }

        @Override
        public void start() {
        }

        @Override
        public void stop() {
        }

        @Override
        public EndpointReference[] getEPRsForService(String serviceName, String ip) {
            return new EndpointReference[0];
        }

        @Override
        public SessionContext getSessionContext(MessageContext mc) {
            return null;
        }

        @Override
        public void destroy() {
        }
    }
}
