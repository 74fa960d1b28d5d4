package io.falkon.e2e.client;

import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.falkon.protocol.GoldenVectors;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.protocol.Message;
import io.falkon.protocol.Protocol;
import io.falkon.protocol.TaskSpec;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import java.util.Map;

/**
 * Random and mutated frames (from the golden vectors) against a live dispatcher, from several
 * connections at once, while a well-behaved client keeps working: the dispatcher never crashes,
 * never hangs, logs no internal error, and the client's tasks all succeed.
 */
class FuzzTest {
    static final List<byte[]> VECTORS = GoldenVectors.all().stream().map(v -> GoldenVectors.frame(v.message())).toList();
    static final String TOKEN = "fuzz-token";
    static final byte[] CLIENT_HELLO = GoldenVectors.frame(Message.Hello.of(Protocol.ROLE_CLIENT, TOKEN, "fuzz"));
    static final byte[] EXECUTOR_HELLO = GoldenVectors.frame(Message.Hello.of(Protocol.ROLE_EXECUTOR, TOKEN, "fuzz"));
    static final byte[] UNAUTHENTICATED_HELLO = GoldenVectors.frame(Message.Hello.of(Protocol.ROLE_CLIENT, "", "fuzz"));
    static final byte[] REGISTER = GoldenVectors.frame(new Message.Register("fuzz", "fuzz", 1, 0, Map.of()));

    @Test
    void randomAndMutatedFramesNeitherCrashNorStallTheDispatcher() throws Exception {
        long seed = System.nanoTime();
        ListAppender<ILoggingEvent> errors = new ListAppender<>();
        errors.start();
        Logger falkon = (Logger) LoggerFactory.getLogger("io.falkon.dispatcher");
        falkon.addAppender(errors);
        try (Topology t = new Topology(DispatcherConfig.local().withToken(TOKEN), 1, 4); FalkonClient good = t.client();
             Instance in = good.createInstance()) {
            SteadyWork steady = new SteadyWork(in);
            ExecutorService fuzzers = Executors.newFixedThreadPool(4);
            List<Future<Integer>> runs = new ArrayList<>();
            for (int f = 0; f < 4; f++) {
                Random rnd = new Random(seed + f);
                runs.add(fuzzers.submit(() -> fuzz(t.dispatcher.port(), rnd, 250)));
            }
            int sent = 0;
            for (Future<Integer> r : runs) {
                sent += r.get(3, TimeUnit.MINUTES); // never hangs
            }
            fuzzers.shutdown();
            assertThat(sent).as("fuzz connections the dispatcher accepted (seed %d)", seed).isEqualTo(1000);
            steady.stopAndAssertAllSucceeded();
            assertThat(good.status()).contains("\"registered\":1");
            assertThat(errors.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.ERROR)).toList())
                    .as("internal errors (seed %d)", seed).isEmpty();
        } finally {
            falkon.detachAppender(errors);
        }
    }

    /**
     * Opens {@code n} connections, each sending something hostile; returns how many the dispatcher
     * accepted. A connection it resets while we write is fine; one it no longer accepts (it died, or
     * stopped listening) fails the count.
     */
    static int fuzz(int port, Random rnd, int n) throws IOException {
        int made = 0;
        for (int i = 0; i < n; i++) {
            Socket s;
            try {
                s = new Socket("127.0.0.1", port);
            } catch (IOException e) {
                continue; // not accepted: counted as missing
            }
            made++;
            try (s) {
                s.setSoTimeout(20);
                OutputStream out = s.getOutputStream();
                switch (rnd.nextInt(6)) {
                    case 0 -> out.write(randomBytes(rnd, 1 + rnd.nextInt(300)));
                    case 1 -> {
                        out.write(CLIENT_HELLO);
                        out.write(mutate(rnd, VECTORS.get(rnd.nextInt(VECTORS.size()))));
                    }
                    case 2 -> {
                        out.write(EXECUTOR_HELLO);
                        out.write(REGISTER);
                        out.write(mutate(rnd, VECTORS.get(rnd.nextInt(VECTORS.size()))));
                    }
                    case 3 -> out.write(mutate(rnd, CLIENT_HELLO));
                    case 4 -> { // no token, then requests anyway
                        out.write(UNAUTHENTICATED_HELLO);
                        out.write(VECTORS.get(rnd.nextInt(VECTORS.size())));
                    }
                    default -> {
                        out.write(CLIENT_HELLO);
                        for (int k = 0; k < 1 + rnd.nextInt(5); k++) {
                            out.write(VECTORS.get(rnd.nextInt(VECTORS.size()))); // valid, but often out of place
                        }
                    }
                }
                out.flush();
                drain(s.getInputStream());
            } catch (IOException e) {
                // reset by the dispatcher: fine
            }
        }
        return made;
    }

    static byte[] randomBytes(Random rnd, int n) {
        byte[] b = new byte[n];
        rnd.nextBytes(b);
        return b;
    }

    static byte[] mutate(Random rnd, byte[] frame) {
        byte[] b = Arrays.copyOf(frame, frame.length);
        switch (rnd.nextInt(4)) {
            case 0 -> {
                for (int k = 0; k < 1 + rnd.nextInt(4); k++) {
                    b[rnd.nextInt(b.length)] ^= (byte) (1 << rnd.nextInt(8));
                }
            }
            case 1 -> b = Arrays.copyOf(b, 1 + rnd.nextInt(b.length)); // truncated
            case 2 -> b[4 + rnd.nextInt(b.length - 4)] = (byte) rnd.nextInt(256);
            default -> { // a lying length prefix
                int len = rnd.nextBoolean() ? rnd.nextInt() : b.length - 4 + rnd.nextInt(64) - 32;
                b[0] = (byte) (len >>> 24);
                b[1] = (byte) (len >>> 16);
                b[2] = (byte) (len >>> 8);
                b[3] = (byte) len;
            }
        }
        return b;
    }

    static void drain(InputStream in) throws IOException {
        byte[] buf = new byte[4096];
        try {
            while (in.read(buf) >= 0) {
                // read whatever the dispatcher answers until it closes or goes quiet
            }
        } catch (SocketTimeoutException e) {
            // quiet: a frame that was valid enough to wait for more; we hang up
        }
    }
}
