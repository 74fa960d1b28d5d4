package io.falkon.dispatcher.admission;

import io.falkon.protocol.LogSafe;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Logs refused requests and broken connections as one line each, without a stack trace, at most
 * {@value #PER_SECOND} lines a second: a peer sending garbage as fast as it can must not fill the
 * disk. What is suppressed is counted and said in the next line that gets through.
 */
public final class BadRequestLog {
    static final int PER_SECOND = 10;
    private static final Logger log = LoggerFactory.getLogger("io.falkon.dispatcher.BadRequests");

    private final AtomicLong windowStart = new AtomicLong();
    private final AtomicLong inWindow = new AtomicLong();
    private final AtomicLong suppressed = new AtomicLong();
    private final AtomicLong total = new AtomicLong();

    /** Logs "{@code from}: {@code what}" unless the rate is exceeded; {@code what} may come from the peer. */
    public void refused(String from, String what) {
        total.incrementAndGet();
        long now = System.nanoTime();
        long start = windowStart.get();
        if (now - start >= TimeUnit.SECONDS.toNanos(1) && windowStart.compareAndSet(start, now)) {
            inWindow.set(0);
        }
        if (inWindow.incrementAndGet() > PER_SECOND) {
            suppressed.incrementAndGet();
            return;
        }
        long skipped = suppressed.getAndSet(0);
        log.warn("{}: {}{}", from, LogSafe.text(what), skipped == 0 ? ""
                : " (" + skipped + " similar lines suppressed)");
    }

    /** Every refusal so far, logged or not. */
    public long total() {
        return total.get();
    }
}
