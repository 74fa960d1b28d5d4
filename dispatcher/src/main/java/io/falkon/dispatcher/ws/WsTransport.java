package io.falkon.dispatcher.ws;

import io.falkon.dispatcher.core.SchedulerLoop;
import org.apache.axiom.om.OMElement;
import org.apache.axiom.om.OMXMLBuilderFactory;
import org.apache.axis2.Constants;
import org.apache.axis2.context.ConfigurationContext;
import org.apache.axis2.context.ConfigurationContextFactory;
import org.apache.axis2.dataretrieval.WSDLSupplier;
import org.apache.axis2.description.AxisOperation;
import org.apache.axis2.description.AxisService;
import org.apache.axis2.description.InOutAxisOperation;
import org.apache.axis2.description.TransportOutDescription;
import org.apache.axis2.transport.http.server.AxisHttpConnectionImpl;
import org.apache.axis2.transport.http.server.HttpConnectionManager;
import org.apache.axis2.transport.http.server.HttpFactory;
import org.apache.hc.core5.http.config.Http1Config;
import org.apache.hc.core5.http.io.SocketConfig;
import org.apache.hc.core5.util.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.xml.namespace.QName;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

import static io.falkon.protocol.soap.SoapXml.NS;

/**
 * The dispatcher's Web Services interface: an embedded Apache Axis2 engine serving the
 * {@code Falkon} SOAP service (SOAP 1.1 and 1.2, document/literal, WSDL at {@code …?wsdl}) on its
 * own HTTP port. Axis2's HTTP worker pool and connection handling are used as they are; only the
 * listening socket is ours, because Axis2's own listener binds every interface and cannot be told
 * otherwise.
 */
public final class WsTransport implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WsTransport.class);
    static final String SERVICE = "Falkon";

    /**
     * Limits of the service.
     *
     * @param maxBundle           most tasks one Submit may carry
     * @param defaultLeaseSeconds lease of an instance created with leaseSeconds 0
     * @param maxLeaseSeconds     longest lease a caller may ask for
     * @param maxWaitSeconds      longest a GetResults call waits
     * @param maxResults          most results one GetResults returns
     */
    public record Settings(int maxBundle, long defaultLeaseSeconds, long maxLeaseSeconds, int maxWaitSeconds,
                           int maxResults) {
        public static Settings defaults() {
            return new Settings(10_000, 600, 7 * 24 * 3600, 60, 10_000);
        }

        public Settings withMaxBundle(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("the maximum bundle must be at least 1, got " + n);
            }
            return new Settings(n, defaultLeaseSeconds, maxLeaseSeconds, maxWaitSeconds, maxResults);
        }
    }

    private final WsGateway gateway;
    private final ServerSocket socket;
    private final ExecutorService workers;
    private final HttpConnectionManager connections;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final Thread acceptor;
    private final String url;
    private volatile boolean closed;

    private WsTransport(WsGateway gateway, ServerSocket socket, ExecutorService workers,
                        HttpConnectionManager connections, Http1Config h1, SocketConfig sc, String url) {
        this.gateway = gateway;
        this.socket = socket;
        this.workers = workers;
        this.connections = connections;
        this.url = url;
        this.acceptor = new Thread(() -> accept(h1, sc), "falkon-ws-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * Starts the service on {@code address} (port 0 picks a free one).
     *
     * @throws IllegalStateException if Axis2 cannot be configured or the port cannot be bound
     */
    public static WsTransport bind(InetSocketAddress address, SchedulerLoop loop, Settings settings) {
        ConfigurationContext ctx;
        try {
            ctx = ConfigurationContextFactory.createBasicConfigurationContext("io/falkon/dispatcher/ws/axis2.xml");
            // the basic factory leaves the senders uninitialised; faults are sent through the http one
            for (TransportOutDescription out : ctx.getAxisConfiguration().getTransportsOut().values()) {
                out.getSender().init(ctx, out);
            }
        } catch (Exception e) {
            throw new IllegalStateException("cannot configure Axis2: " + e.getMessage(), e);
        }
        String servicePath = "/" + ctx.getServiceContextPath().replaceAll("^/+|/+$", "") + "/" + SERVICE;
        ServerSocket ss = null;
        WsGateway gateway = new WsGateway(loop, settings);
        try {
            ss = new ServerSocket();
            ss.setReuseAddress(true);
            ss.bind(address, 256);
            String url = "http://" + advertisedHost(address) + ":" + ss.getLocalPort() + servicePath;
            AxisService service = service(gateway, servicePath, url);
            ctx.getAxisConfiguration().addService(service);
            HttpFactory factory = new HttpFactory(ctx, ss.getLocalPort()) {
                @Override
                public SocketConfig newSocketConfig() {
                    // Axis2's default of 8 KiB socket buffers throttles bundles of thousands of tasks
                    return SocketConfig.custom().setSoTimeout(Timeout.ofSeconds(settings.maxWaitSeconds() + 60))
                            .setTcpNoDelay(true).setSndBufSize(256 * 1024).setRcvBufSize(256 * 1024).build();
                }
            };
            ExecutorService workers = factory.newRequestExecutor(ss.getLocalPort());
            Http1Config h1 = factory.newRequestConnectionHttp1Config();
            HttpConnectionManager connections = factory.newRequestConnectionManager(workers,
                    factory.newRequestWorkerFactory(), h1);
            WsTransport t = new WsTransport(gateway, ss, workers, connections, h1, factory.newSocketConfig(), url);
            log.info("WS interface at {} (WSDL: {}?wsdl)", url, url);
            return t;
        } catch (IOException | RuntimeException e) {
            gateway.close();
            if (ss != null) {
                try {
                    ss.close();
                } catch (IOException ignored) {
                    // failing anyway
                }
            }
            throw new IllegalStateException("cannot start the WS interface on " + address + ": " + e.getMessage(), e);
        }
    }

    private static String advertisedHost(InetSocketAddress address) {
        InetAddress a = address.getAddress();
        if (a == null || !a.isAnyLocalAddress()) {
            return address.getHostString();
        }
        try {
            return InetAddress.getLocalHost().getCanonicalHostName();
        } catch (IOException e) {
            return "127.0.0.1";
        }
    }

    private static AxisService service(WsGateway gateway, String servicePath, String url) throws IOException {
        AxisService service = new AxisService(SERVICE);
        service.setTargetNamespace(NS);
        WsOperations receiver = new WsOperations(gateway, servicePath);
        for (String name : WsOperations.NAMES) {
            AxisOperation op = new InOutAxisOperation(new QName(NS, name));
            op.setMessageReceiver(receiver);
            op.setSoapAction(NS + ":" + name);
            service.addOperation(op);
            service.mapActionToOperation(NS + ":" + name, op);
            service.addMessageElementQNameToOperationMapping(new QName(NS, name), op);
        }
        OMElement wsdl = wsdl(url);
        service.addParameter(Constants.WSDL_SUPPLIER_PARAM, (WSDLSupplier) s -> wsdl.cloneOMElement());
        return service;
    }

    /** The hand-written WSDL with this service's address in it. */
    static OMElement wsdl(String url) throws IOException {
        String text;
        try (InputStream in = WsTransport.class.getResourceAsStream("falkon.wsdl")) {
            if (in == null) {
                throw new IOException("falkon.wsdl is missing from the dispatcher jar");
            }
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("@ADDRESS@", url);
        }
        OMElement root = OMXMLBuilderFactory.createOMBuilder(
                new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8))).getDocumentElement();
        root.build();
        return root;
    }

    private void accept(Http1Config h1, SocketConfig sc) {
        while (!closed) {
            Socket s;
            try {
                s = socket.accept();
            } catch (IOException e) {
                if (!closed) {
                    log.warn("WS interface: accept failed: {}", e.toString());
                }
                continue;
            }
            open.removeIf(Socket::isClosed);
            open.add(s);
            try {
                connections.process(new Connection(s, h1, sc));
            } catch (IOException | RuntimeException e) {
                log.debug("WS interface: connection from {} refused: {}", s.getRemoteSocketAddress(), e.toString());
                closeQuietly(s);
            }
        }
    }

    /**
     * Axis2's server connection, made safe to close twice: Axis2 closes a connection the client
     * asked to close, then closes it again when its worker ends, and the second close throws (and
     * kills the worker thread).
     */
    private static final class Connection extends AxisHttpConnectionImpl {
        Connection(Socket socket, Http1Config h1, SocketConfig sc) throws IOException {
            super("http", socket, h1, sc);
        }

        @Override
        public void close() throws IOException {
            if (isOpen()) {
                super.close();
            }
        }
    }

    /** The service's address, e.g. {@code http://127.0.0.1:50600/axis2/services/Falkon}. */
    public String url() {
        return url;
    }

    public int port() {
        return socket.getLocalPort();
    }

    /** Stops listening, destroys the WS instances, and closes every connection at once. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        closeQuietly(socket);
        gateway.close();
        for (Socket s : open) {
            closeQuietly(s); // workers blocked reading a kept-alive connection wake up now
        }
        workers.shutdownNow();
        try {
            workers.awaitTermination(5, TimeUnit.SECONDS);
            acceptor.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        connections.shutdown();
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
