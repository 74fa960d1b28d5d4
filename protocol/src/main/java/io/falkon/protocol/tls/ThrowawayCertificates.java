package io.falkon.protocol.tls;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Throwaway certificates, for the TLS tests and the TLS benchmark, made with the JDK's own
 * {@code keytool}: a CA valid for 30 days, and a server certificate it signs for {@code 127.0.0.1}
 * and {@code localhost}, written as the PEM files the dispatcher ({@code --tls-cert},
 * {@code --tls-key}) and its peers ({@code --tls-ca}) take. Not for production: a real deployment
 * uses certificates from its site's CA (docs/security.md).
 */
public final class ThrowawayCertificates {
    private static final String PASS = "changeit";

    /** The files: the CA certificate, the server's chain (server then CA), and the server's key (PKCS#8). */
    public record Pem(Path ca, Path chain, Path key) {
    }

    private ThrowawayCertificates() {
    }

    /** Generates a CA and a server certificate for 127.0.0.1/localhost in {@code dir}. */
    public static Pem generate(Path dir) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        Path caStore = dir.resolve("ca.p12");
        Path serverStore = dir.resolve("server.p12");
        Path ca = dir.resolve("ca.pem");
        Path csr = dir.resolve("server.csr");
        Path cert = dir.resolve("server-cert.pem");
        keytool("-genkeypair", "-alias", "ca", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=falkon test CA " + dir.getFileName(),
                "-ext", "bc:c", "-validity", "30", "-keystore", caStore.toString(), "-storetype", "PKCS12",
                "-storepass", PASS);
        keytool("-exportcert", "-alias", "ca", "-rfc", "-keystore", caStore.toString(), "-storepass", PASS,
                "-file", ca.toString());
        keytool("-genkeypair", "-alias", "server", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=127.0.0.1",
                "-validity", "30", "-keystore", serverStore.toString(), "-storetype", "PKCS12", "-storepass", PASS);
        keytool("-certreq", "-alias", "server", "-keystore", serverStore.toString(), "-storepass", PASS,
                "-file", csr.toString());
        keytool("-gencert", "-alias", "ca", "-keystore", caStore.toString(), "-storepass", PASS,
                "-infile", csr.toString(), "-outfile", cert.toString(), "-rfc", "-validity", "30",
                "-ext", "san=ip:127.0.0.1,dns:localhost", "-ext", "eku=serverAuth");
        Path chain = dir.resolve("server-chain.pem");
        Files.writeString(chain, Files.readString(cert) + Files.readString(ca));
        Path key = dir.resolve("server-key.pem");
        Files.writeString(key, pkcs8(serverStore));
        return new Pem(ca, chain, key);
    }

    private static String pkcs8(Path store) throws IOException {
        try (InputStream in = Files.newInputStream(store)) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, PASS.toCharArray());
            PrivateKey k = (PrivateKey) ks.getKey("server", PASS.toCharArray());
            return "-----BEGIN PRIVATE KEY-----\n"
                    + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(k.getEncoded())
                    + "\n-----END PRIVATE KEY-----\n";
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot read the test key: " + e.getMessage(), e);
        }
    }

    private static void keytool(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("keytool " + args[0] + " failed: " + out);
        }
    }
}
