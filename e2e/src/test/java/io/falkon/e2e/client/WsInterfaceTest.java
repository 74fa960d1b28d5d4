package io.falkon.e2e.client;

import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.transport.ws.WsTransport;
import io.falkon.protocol.TaskSpec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;
import org.xml.sax.SAXException;

import javax.wsdl.Binding;
import javax.wsdl.Definition;
import javax.wsdl.Operation;
import javax.wsdl.Port;
import javax.wsdl.PortType;
import javax.wsdl.extensions.soap.SOAPAddress;
import javax.wsdl.extensions.soap12.SOAP12Address;
import javax.wsdl.factory.WSDLFactory;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.transform.dom.DOMSource;
import javax.xml.validation.Schema;
import javax.xml.validation.SchemaFactory;
import java.io.StringReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import javax.wsdl.BindingOperation;
import javax.wsdl.Service;
import javax.wsdl.extensions.soap.SOAPHeader;
import javax.xml.namespace.QName;

/**
 * The Web Services interface on the wire: SOAP envelopes written by hand and posted with the JDK's
 * {@link HttpClient} (not through Axis2), every request and response body validated against the
 * schema in the service's own WSDL, faults for each kind of bad input, leases, and isolation from
 * TCP clients. One dispatcher with two executors running real processes.
 */
class WsInterfaceTest {
    private static final String SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/";
    private static final String SOAP12 = "http://www.w3.org/2003/05/soap-envelope";
    private static final String NS = "urn:falkon:ws:1";
    private static final int MAX_BUNDLE = 20;

    private static Topology topology;
    private static String url;
    private static Schema schema;
    private static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() throws Exception {
        topology = new Topology(DispatcherConfig.local()
                .withWs(0, WsTransport.Settings.defaults().withMaxBundle(MAX_BUNDLE)), 2, 2);
        url = topology.dispatcher.wsUrl();
        schema = schemaOf(dom(get(url + "?wsdl")));
    }

    @AfterAll
    static void stop() {
        topology.close();
    }

    // ---- the WSDL --------------------------------------------------------------------------

    @Test
    void theWsdlParsesAndListsTheSevenOperationsOnSoap11AndSoap12Bindings() throws Exception {
        var reader = WSDLFactory.newInstance().newWSDLReader();
        reader.setFeature("javax.wsdl.verbose", false);
        Definition def = reader.readWSDL(url + "?wsdl", dom(get(url + "?wsdl")));
        PortType pt = def.getPortType(new QName(NS, "FalkonPortType"));
        Set<String> ops = new TreeSet<>();
        for (Object o : pt.getOperations()) {
            ops.add(((Operation) o).getName());
        }
        assertThat(ops).containsExactlyInAnyOrder("CreateInstance", "Submit", "GetStatus", "GetResults", "Destroy",
                "Halt", "CancelTasks");
        List<String> addresses = new ArrayList<>();
        Service svc = def.getService(new QName(NS, "Falkon"));
        for (Object p : svc.getPorts().values()) {
            Port port = (Port) p;
            Binding b = port.getBinding();
            assertThat(b.getBindingOperations().size()).isEqualTo(7);
            for (Object ext : port.getExtensibilityElements()) {
                if (ext instanceof SOAPAddress a) {
                    addresses.add("1.1 " + a.getLocationURI());
                } else if (ext instanceof SOAP12Address a) {
                    addresses.add("1.2 " + a.getLocationURI());
                }
            }
        }
        assertThat(addresses).containsExactlyInAnyOrder("1.1 " + url, "1.2 " + url);
        // the token travels in a SOAP header the WSDL declares, for clients generated from it
        Binding b = def.getBinding(new QName(NS, "FalkonSoap11Binding"));
        for (Object o : b.getBindingOperations()) {
            BindingOperation op = (BindingOperation) o;
            List<?> elements = op.getBindingInput().getExtensibilityElements(); // a raw List in WSDL4J's API
            assertThat(elements).as(op.getName()).anySatisfy(e -> assertThat(e).isInstanceOf(SOAPHeader.class));
        }
    }

    // ---- the exchange, on the wire ---------------------------------------------------------

    @Test
    void createSubmitFetchStatusDestroyWithRawEnvelopesThatMatchTheWsdl() throws Exception {
        Element created = call("CreateInstance", "<f:clientName>raw</f:clientName><f:leaseSeconds>120</f:leaseSeconds>");
        assertThat(text(created, "endpoint")).isEqualTo(url);
        assertThat(text(created, "leaseSeconds")).isEqualTo("120");
        String key = text(created, "key");

        Element submitted = call("Submit", "<f:key>" + key + "</f:key>"
                + "<f:task><f:command>/bin/echo</f:command><f:arg>hello &amp; welcome</f:arg></f:task>"
                + "<f:task id=\"42\"><f:command>/bin/sh</f:command><f:arg>-c</f:arg>"
                + "<f:arg>printf %s \"$GREETING\" >&amp;2; exit 3</f:arg><f:env name=\"GREETING\">hi there</f:env>"
                + "<f:wallTimeMillis>60000</f:wallTimeMillis><f:retries>0</f:retries><f:priority>5</f:priority>"
                + "<f:cores>1</f:cores><f:memoryMiB>16</f:memoryMiB></f:task>");
        assertThat(text(submitted, "accepted")).isEqualTo("2");
        assertThat(texts(submitted, "id")).containsExactly("0", "42");

        Map<String, Element> results = fetchAll(key, 2);
        Element hello = results.get("0");
        assertThat(hello.getAttribute("status")).isEqualTo("EXITED");
        assertThat(hello.getAttribute("exitCode")).isEqualTo("0");
        assertThat(hello.getAttribute("executor")).startsWith("exec-"); // the same executors TCP clients use
        assertThat(text(hello, "stdout")).isEqualTo("hello & welcome\n");
        Element three = results.get("42");
        assertThat(three.getAttribute("exitCode")).isEqualTo("3");
        assertThat(text(three, "stderr")).isEqualTo("hi there");
        assertThat(Long.parseLong(three.getAttribute("completed")))
                .isGreaterThanOrEqualTo(Long.parseLong(three.getAttribute("submitted")));

        Element status = call("GetStatus", "<f:key>" + key + "</f:key>");
        assertThat(text(status, "completed")).isEqualTo("2");
        assertThat(text(status, "failed")).isEqualTo("1");
        assertThat(text(status, "unfetched")).isEqualTo("0");
        assertThat(text(status, "document")).contains("\"leaseSeconds\":120");

        Element destroyed = call("Destroy", "<f:key>" + key + "</f:key>");
        assertThat(text(destroyed, "cancelled")).isEqualTo("0");
        assertThat(faultOf(post11("GetStatus", "<f:key>" + key + "</f:key>"))).contains("unknown instance");
    }

    @Test
    void someTasksAreCancelledByIdAndBadCancelRequestsGetFaultsNamingWhatIsWrong() throws Exception {
        String key = text(call("CreateInstance", ""), "key");
        call("Submit", "<f:key>" + key + "</f:key>"
                + "<f:task id=\"1\"><f:command>/bin/sleep</f:command><f:arg>600</f:arg></f:task>"
                + "<f:task id=\"2\"><f:command>/bin/echo</f:command><f:arg>kept</f:arg></f:task>");
        Element cancelled = call("CancelTasks", "<f:key>" + key + "</f:key><f:taskId>1</f:taskId><f:taskId>77</f:taskId>");
        assertThat(text(cancelled, "cancelled")).as("1 was unfinished; 77 is no task").isEqualTo("1");
        Map<String, Element> results = fetchAll(key, 2);
        assertThat(results.get("1").getAttribute("status")).isEqualTo("CANCELLED");
        assertThat(text(results.get("2"), "stdout")).isEqualTo("kept\n");

        assertThat(faultOf(post11("CancelTasks", "<f:key>" + key + "</f:key><f:taskId>-3</f:taskId>")))
                .contains("CancelTasks: taskId[0] '-3' is not a task id");
        assertThat(faultOf(post11("CancelTasks", "<f:key>" + key + "</f:key>"))).contains("CancelTasks: no taskId");
        assertThat(faultOf(post11("CancelTasks", "<f:taskId>1</f:taskId>"))).contains("CancelTasks");
        String otherKey = key.substring(0, key.length() - 1) + (key.endsWith("0") ? "1" : "0");
        assertThat(faultOf(post11("CancelTasks", "<f:key>" + otherKey + "</f:key><f:taskId>1</f:taskId>")))
                .as("a key that is not the instance's opens nothing").containsAnyOf("unknown instance", "key");
        call("Destroy", "<f:key>" + key + "</f:key>");
    }

    @Test
    void soap12WorksTooAndItsFaultsUseSender() throws Exception {
        String created = post(SOAP12, "application/soap+xml; charset=UTF-8; action=\"urn:falkon:ws:1:CreateInstance\"",
                "CreateInstance", "");
        Element body = bodyChild(created, SOAP12);
        validate(body);
        String key = text(body, "key");
        String fault = post(SOAP12, "application/soap+xml; charset=UTF-8", "Submit", "<f:key>" + key + "</f:key><f:task/>");
        Element f = bodyChild(fault, SOAP12);
        assertThat(f.getLocalName()).isEqualTo("Fault");
        assertThat(f.getElementsByTagNameNS(SOAP12, "Value").item(0).getTextContent()).endsWith(":Sender");
        assertThat(f.getElementsByTagNameNS(SOAP12, "Text").item(0).getTextContent())
                .contains("task 0 of the bundle: no <command>");
        call("Destroy", "<f:key>" + key + "</f:key>");
    }

    @Test
    void aBundleOfTheMaximumSizeIsAcceptedAndEveryResultComesBack() throws Exception {
        String key = text(call("CreateInstance", ""), "key");
        StringBuilder tasks = new StringBuilder("<f:key>" + key + "</f:key>");
        for (int i = 0; i < MAX_BUNDLE; i++) {
            tasks.append("<f:task><f:command>/bin/echo</f:command><f:arg>").append(i).append("</f:arg></f:task>");
        }
        assertThat(texts(call("Submit", tasks.toString()), "id")).hasSize(MAX_BUNDLE);
        Map<String, Element> results = fetchAll(key, MAX_BUNDLE);
        for (int i = 0; i < MAX_BUNDLE; i++) {
            assertThat(text(results.get(Integer.toString(i)), "stdout")).isEqualTo(i + "\n");
        }
        call("Destroy", "<f:key>" + key + "</f:key>");
    }

    // ---- bad input -------------------------------------------------------------------------

    @Test
    void eachKindOfBadInputGetsAFaultNamingItAndNothingAcceptedIsLost() throws Exception {
        String key = text(call("CreateInstance", ""), "key");
        // accepted first: a task that is still running while the bad calls come in
        call("Submit", "<f:key>" + key + "</f:key><f:task id=\"7\"><f:command>/bin/sh</f:command><f:arg>-c</f:arg>"
                + "<f:arg>sleep 1; echo survived</f:arg></f:task>");

        Map<String, String> faults = new HashMap<>();
        faults.put("malformed", faultOf(postRaw(SOAP11, "text/xml; charset=UTF-8", "Submit",
                "<s:Envelope xmlns:s=\"" + SOAP11 + "\" xmlns:f=\"" + NS + "\"><s:Body><f:Submit><f:key>" + key
                        + "</f:key><f:task><f:command>x</f:task></f:Submit></s:Body></s:Envelope>")));
        faults.put("unknown", faultOf(post11("Submit", "<f:key>0123456789abcdef-" + "0".repeat(32)
                + "</f:key><f:task><f:command>/bin/true</f:command></f:task>")));
        faults.put("wrongSecret", faultOf(post11("GetStatus", "<f:key>" + key.substring(0, key.indexOf('-') + 1)
                + "f".repeat(32) + "</f:key>")));
        faults.put("notAKey", faultOf(post11("GetResults", "<f:key>not-hex</f:key>")));
        StringBuilder big = new StringBuilder("<f:key>" + key + "</f:key>");
        for (int i = 0; i <= MAX_BUNDLE; i++) {
            big.append("<f:task><f:command>/bin/true</f:command></f:task>");
        }
        faults.put("tooBig", faultOf(post11("Submit", big.toString())));
        faults.put("noCommand", faultOf(post11("Submit", "<f:key>" + key + "</f:key>"
                + "<f:task><f:command>/bin/true</f:command></f:task><f:task><f:arg>x</f:arg></f:task>")));
        faults.put("badNumber", faultOf(post11("Submit", "<f:key>" + key + "</f:key>"
                + "<f:task><f:command>/bin/true</f:command><f:wallTimeMillis>soon</f:wallTimeMillis></f:task>")));
        faults.put("badPriority", faultOf(post11("Submit", "<f:key>" + key + "</f:key>"
                + "<f:task><f:command>/bin/true</f:command><f:priority>4294967296</f:priority></f:task>")));
        faults.put("badCores", faultOf(post11("Submit", "<f:key>" + key + "</f:key>"
                + "<f:task><f:command>/bin/true</f:command><f:cores>0</f:cores></f:task>")));
        faults.put("typo", faultOf(post11("Submit", "<f:key>" + key + "</f:key>"
                + "<f:task><f:command>/bin/true</f:command><f:argument>x</f:argument></f:task>")));
        faults.put("noKey", faultOf(post11("Destroy", "")));
        faults.put("badMax", faultOf(post11("GetResults", "<f:key>" + key + "</f:key><f:max>0</f:max>")));
        faults.put("wrapped", faultOf(post11("GetResults", "<f:key>" + key + "</f:key><f:max>-4294967291</f:max>")));
        faults.put("dupIds", faultOf(post11("Submit", "<f:key>" + key + "</f:key>"
                + "<f:task id=\"9\"><f:command>/bin/true</f:command></f:task>"
                + "<f:task id=\"9\"><f:command>/bin/true</f:command></f:task>")));
        faults.put("reusedId", faultOf(post11("Submit", "<f:key>" + key + "</f:key>"
                + "<f:task id=\"7\"><f:command>/bin/true</f:command></f:task>"
                + "<f:task id=\"8\"><f:command>/bin/true</f:command></f:task>")));

        assertThat(faults.get("malformed")).contains("not a well-formed SOAP envelope");
        assertThat(faults.get("unknown")).contains("unknown instance").contains("12345678");
        assertThat(faults.get("wrongSecret")).contains("unknown instance");
        assertThat(faults.get("notAKey")).contains("GetResults: <key> is not an instance key");
        assertThat(faults.get("tooBig")).contains("more than " + MAX_BUNDLE + " tasks");
        assertThat(faults.get("noCommand")).contains("task 1 of the bundle: no <command>");
        assertThat(faults.get("badNumber")).contains("task 0 of the bundle: <wallTimeMillis>: 'soon' is not an integer");
        assertThat(faults.get("badPriority")).contains("task 0 of the bundle: <priority>: 4294967296 is out of range");
        assertThat(faults.get("badCores")).contains("task 0 of the bundle: <cores>: 0 is out of range 1..65536");
        assertThat(faults.get("typo")).contains("unknown element <argument>");
        assertThat(faults.get("noKey")).contains("Destroy: no <key>");
        assertThat(faults.get("badMax")).contains("GetResults: <max>: 0 is out of range");
        assertThat(faults.get("wrapped")).contains("GetResults: <max>: -4294967291 is out of range");
        assertThat(faults.get("dupIds")).contains("clientTaskId 9").contains("twice");
        assertThat(faults.get("reusedId")).contains("clientTaskId 7").contains("already used");
        assertThat(faults.values()).allSatisfy(f -> assertThat(f).doesNotContainPattern("[a-z]+\\.[a-z]+\\.[A-Z]\\w+"));

        // none of the refused bundles queued anything; the accepted task still finishes and is delivered
        Map<String, Element> results = fetchAll(key, 1);
        assertThat(results).containsOnlyKeys("7");
        assertThat(text(results.get("7"), "stdout")).isEqualTo("survived\n");
        assertThat(text(call("GetStatus", "<f:key>" + key + "</f:key>"), "completed")).isEqualTo("1");
        call("Destroy", "<f:key>" + key + "</f:key>");
    }

    @Test
    void anInstanceNobodyCallsForItsLeaseIsDestroyedAndItsTasksCancelled() throws Exception {
        String key = text(call("CreateInstance", "<f:leaseSeconds>1</f:leaseSeconds>"), "key");
        call("Submit", "<f:key>" + key + "</f:key><f:task><f:command>/bin/sleep</f:command><f:arg>60</f:arg></f:task>");
        String probe = "<f:key>" + key + "</f:key>";
        // the lease runs from the last call: stop calling, then look only at the dispatcher's own status
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                .until(() -> new ObjectMapper().readTree(topology.dispatcher.status()).path("running").asInt() == 0);
        assertThat(new ObjectMapper().readTree(topology.dispatcher.status()).path("instances").asInt()).isZero();
        assertThat(faultOf(post11("GetStatus", probe))).contains("unknown instance");
    }

    @Test
    void aTcpInstanceIsOutOfReachOverWsWithoutItsSecret() throws Exception {
        try (FalkonClient tcp = topology.client(); Instance in = tcp.createInstance("tcp-owner")) {
            String id = Long.toUnsignedString(in.id(), 16);
            assertThat(faultOf(post11("Destroy", "<f:key>" + id + "</f:key>"))).contains("not an instance key");
            assertThat(faultOf(post11("Destroy", "<f:key>" + id + "-" + "0".repeat(32) + "</f:key>")))
                    .contains("unknown instance");
            assertThat(in.submit(TaskSpec.of("/bin/echo", "still mine")).get().stdout()).isEqualTo("still mine\n");
        }
    }

    // ---- helpers ---------------------------------------------------------------------------

    /** Fetches with long-polls until {@code n} results have come; each response validated. */
    private static Map<String, Element> fetchAll(String key, int n) throws Exception {
        Map<String, Element> byId = new HashMap<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (byId.size() < n) {
            assertThat(System.nanoTime()).as("all %d results within 60 s", n).isLessThan(deadline);
            Element r = call("GetResults", "<f:key>" + key + "</f:key><f:max>7</f:max><f:waitSeconds>5</f:waitSeconds>");
            NodeList list = r.getElementsByTagNameNS(NS, "result");
            assertThat(list.getLength()).isLessThanOrEqualTo(7);
            for (int i = 0; i < list.getLength(); i++) {
                Element e = (Element) list.item(i);
                assertThat(byId.put(e.getAttribute("id"), e)).as("result %s only once", e.getAttribute("id")).isNull();
            }
            assertThat(Long.parseLong(text(r, "outstanding"))).isEqualTo(n - byId.size());
        }
        return byId;
    }

    /** A SOAP 1.1 call whose request and response bodies must both be valid against the WSDL's schema. */
    private static Element call(String op, String content) throws Exception {
        String request = envelope(SOAP11, op, content);
        validate(bodyChild(request, SOAP11));
        String response = postRaw(SOAP11, "text/xml; charset=UTF-8", op, request);
        Element body = bodyChild(response, SOAP11);
        assertThat(body.getLocalName()).as("response to %s: %s", op, response).isEqualTo(op + "Response");
        validate(body);
        return body;
    }

    private static String post11(String op, String content) throws Exception {
        return postRaw(SOAP11, "text/xml; charset=UTF-8", op, envelope(SOAP11, op, content));
    }

    private static String post(String soapNs, String contentType, String op, String content) throws Exception {
        return postRaw(soapNs, contentType, op, envelope(soapNs, op, content));
    }

    private static String postRaw(String soapNs, String contentType, String op, String envelope) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(8))
                .header("Content-Type", contentType)
                .header("Authorization", "Bearer " + topology.dispatcher.token().value())
                .POST(HttpRequest.BodyPublishers.ofString(envelope));
        if (soapNs.equals(SOAP11)) {
            b.header("SOAPAction", "\"urn:falkon:ws:1:" + op + "\"");
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    private static String envelope(String soapNs, String op, String content) {
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?><s:Envelope xmlns:s=\"" + soapNs + "\" xmlns:f=\"" + NS
                + "\"><s:Body><f:" + op + ">" + content + "</f:" + op + "></s:Body></s:Envelope>";
    }

    private static String get(String u) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(u))
                .header("Authorization", "Bearer " + topology.dispatcher.token().value()).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return r.body();
    }

    /** The fault reason of a SOAP 1.1 response (fails the test if it is not a fault). */
    private static String faultOf(String response) throws Exception {
        Element f = bodyChild(response, SOAP11);
        assertThat(f.getLocalName()).as("a fault: %s", response).isEqualTo("Fault");
        assertThat(f.getElementsByTagName("faultcode").item(0).getTextContent()).endsWith(":Client");
        return f.getElementsByTagName("faultstring").item(0).getTextContent();
    }

    private static Document dom(String xml) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(true);
        return f.newDocumentBuilder().parse(new InputSource(new StringReader(xml)));
    }

    private static Element bodyChild(String xml, String soapNs) throws Exception {
        Element body = (Element) dom(xml).getElementsByTagNameNS(soapNs, "Body").item(0);
        assertThat(body).as("a SOAP %s body in %s", soapNs, xml).isNotNull();
        for (Node n = body.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e) {
                return e;
            }
        }
        throw new AssertionError("empty SOAP body: " + xml);
    }

    /** The xs:schema inside the WSDL's types, as a validator. */
    private static Schema schemaOf(Document wsdl) throws SAXException {
        Element xs = (Element) wsdl.getElementsByTagNameNS(XMLConstants.W3C_XML_SCHEMA_NS_URI, "schema").item(0);
        return SchemaFactory.newInstance(XMLConstants.W3C_XML_SCHEMA_NS_URI).newSchema(new DOMSource(xs));
    }

    private static void validate(Element element) throws Exception {
        try {
            schema.newValidator().validate(new DOMSource(element));
        } catch (SAXException e) {
            throw new AssertionError("<" + element.getLocalName() + "> does not match the WSDL: " + e.getMessage(), e);
        }
    }

    private static String text(Element parent, String name) {
        NodeList l = parent.getElementsByTagNameNS(NS, name);
        assertThat(l.getLength()).as("<%s> in <%s>", name, parent.getLocalName()).isGreaterThan(0);
        return l.item(0).getTextContent();
    }

    private static List<String> texts(Element parent, String name) {
        NodeList l = parent.getElementsByTagNameNS(NS, name);
        List<String> out = new ArrayList<>();
        for (int i = 0; i < l.getLength(); i++) {
            out.add(l.item(i).getTextContent());
        }
        return out.stream().collect(Collectors.toList());
    }
}
