package io.falkon.protocol.tls;

import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.buffer.ByteBufAllocator;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * TLS for Falkon's connections, built the same way on every side (Netty's {@link SslHandler} over
 * the JDK's TLS): a server presents a certificate chain and key in PEM files; a client trusts the
 * CA in a PEM file (or the JDK's default trust store) and checks that the certificate names the host
 * it dialled. TLS 1.3 and 1.2 only.
 */
public final class Tls {
    private static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

    private final SslContext context;
    private final boolean client;

    private Tls(SslContext context, boolean client) {
        this.context = context;
        this.client = client;
    }

    /**
     * A server's TLS from its certificate chain and private key (PKCS#8 PEM).
     *
     * @throws IllegalArgumentException naming the file, if a file is missing or unreadable
     */
    public static Tls server(Path certChain, Path key) {
        requireFile(certChain, "--tls-cert");
        requireFile(key, "--tls-key");
        try {
            return new Tls(SslContextBuilder.forServer(certChain.toFile(), key.toFile()).sslProvider(SslProvider.JDK)
                    .protocols(PROTOCOLS).build(), false);
        } catch (SSLException | IllegalArgumentException e) {
            throw new IllegalArgumentException("cannot use " + certChain + " and " + key + " for TLS: "
                    + e.getMessage(), e);
        }
    }

    /** A client's TLS trusting the CA certificates in {@code ca} (PEM), or the JDK's defaults when null. */
    public static Tls client(Path ca) {
        if (ca != null) {
            requireFile(ca, "--tls-ca");
        }
        try {
            SslContextBuilder b = SslContextBuilder.forClient().sslProvider(SslProvider.JDK).protocols(PROTOCOLS);
            if (ca != null) {
                b.trustManager(ca.toFile());
            }
            return new Tls(b.build(), true);
        } catch (SSLException | IllegalArgumentException e) {
            throw new IllegalArgumentException("cannot use " + ca + " as the TLS trust anchors: " + e.getMessage(), e);
        }
    }

    private static void requireFile(Path p, String option) {
        if (p == null || !Files.isReadable(p)) {
            throw new IllegalArgumentException(option + " " + p + ": no such readable file");
        }
    }

    /** A handler for a new server-side connection. */
    public SslHandler serverHandler(ByteBufAllocator alloc) {
        return context.newHandler(alloc);
    }

    /** A handler for a connection to {@code host:port}, checking that the server's certificate names {@code host}. */
    public SslHandler clientHandler(ByteBufAllocator alloc, String host, int port) {
        if (!client) {
            throw new IllegalStateException("a server's TLS cannot dial");
        }
        SslHandler h = context.newHandler(alloc, host, port);
        SSLEngine engine = h.engine();
        SSLParameters params = engine.getSSLParameters();
        params.setEndpointIdentificationAlgorithm("HTTPS"); // the certificate must name the host dialled
        engine.setSSLParameters(params);
        return h;
    }

    /** The JDK context, for HTTP clients (the WS client over https). */
    public SSLContext jdkContext() {
        return ((JdkSslContext) context).context();
    }
}
