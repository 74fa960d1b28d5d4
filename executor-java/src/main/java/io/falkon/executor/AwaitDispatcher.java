package io.falkon.executor;

import io.falkon.protocol.HostPort;
import io.falkon.protocol.session.Backoff;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;

/**
 * An executor started before its dispatcher, on an account where the dispatcher has not written
 * its token yet ({@code ~/.falkon/token} is made on its first start): the token can only be read
 * once the dispatcher is up, and everything the executor builds (the session, the peer cache
 * server) needs it from the start. So such an executor first waits for the address to accept a
 * connection, then looks for the token again. With a token at hand the session itself waits
 * ({@code PeerSession.Config#awaitFirstFor}).
 */
final class AwaitDispatcher {
    private static final Logger log = LoggerFactory.getLogger(AwaitDispatcher.class);

    private AwaitDispatcher() {
    }

    /** Whether something listens at {@code hp} within {@code limit}; says once that it waits. */
    static boolean listening(HostPort hp, Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        boolean told = false;
        for (int attempt = 0; ; attempt++) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(hp.host(), hp.port()), 5_000);
                return true;
            } catch (IOException e) {
                if (!told) {
                    told = true;
                    log.warn("no dispatcher at {} yet ({}); dialling again for up to {} s", hp, e.getMessage(),
                            limit.toSeconds());
                }
            }
            if (System.nanoTime() >= deadline) {
                return false;
            }
            Thread.sleep(Backoff.DEFAULT.delayMillis(attempt));
        }
    }
}
