package io.falkon.e2e;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/** Ports for the processes the end-to-end tests start, where a test must name the port itself. */
public final class Ports {
    private Ports() {
    }

    /**
     * A port free now and below the kernel's ephemeral range. A port the kernel handed out (bind to
     * 0) can be handed out again at once as the source port of any outgoing connection, such as an
     * executor dialling another dispatcher, and the dispatcher meant for it then fails with "Address
     * already in use" (seen in CI). Ports below the range are never picked that way. The test JVMs
     * that run side by side (e2e/pom.xml) each pick from their own share of the range, so one never
     * takes a port another has just found free, or one a restarted dispatcher of the other's is to
     * bind again.
     */
    public static int free() throws IOException {
        int below = ephemeralLow();
        int forks = Math.max(1, Integer.getInteger("falkon.e2e.forks", 1));
        int fork = Math.floorMod(Integer.getInteger("falkon.e2e.fork", 1) - 1, forks);
        int share = (below - 10_000) / forks;
        int low = 10_000 + fork * share;
        for (int attempt = 0; attempt < 1000; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(low, low + share);
            try (ServerSocket s = new ServerSocket(port)) {
                return s.getLocalPort();
            } catch (IOException taken) {
                // in use: another one
            }
        }
        throw new IOException("no free port between " + low + " and " + (low + share));
    }

    private static int ephemeralLow() {
        try {
            // readAllLines, not readString: on JDK 17 readString returns one byte of this /proc/sys file
            String range = Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).get(0).trim();
            return Math.max(11_000, Integer.parseInt(range.split("\\s+")[0]));
        } catch (IOException | RuntimeException e) {
            return 32_768; // Linux's default
        }
    }
}
