package io.falkon.datacache.fetch;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.locks.LockSupport;

/**
 * A byte-rate cap shared by every stream it limits: an EMULATION of a shared file system whose
 * aggregate bandwidth is saturated, used by the data-diffusion benchmarks (a real GPFS cannot be had
 * here). Tokens refill continuously at {@code bytesPerSecond}, up to a burst of a tenth of a second.
 */
public final class TokenBucket {
    private final double bytesPerSecond;
    private final double burst;
    private double tokens;
    private long lastNanos = System.nanoTime();

    public TokenBucket(long bytesPerSecond) {
        if (bytesPerSecond <= 0) {
            throw new IllegalArgumentException("bandwidth must be positive");
        }
        this.bytesPerSecond = bytesPerSecond;
        this.burst = Math.max(64 * 1024, bytesPerSecond / 10.0);
        this.tokens = burst;
    }

    public long bytesPerSecond() {
        return (long) bytesPerSecond;
    }

    /** Takes {@code n} bytes' worth of tokens, waiting as long as the rate requires. */
    public void take(int n) {
        long waitNanos;
        synchronized (this) {
            long now = System.nanoTime();
            tokens = Math.min(burst, tokens + (now - lastNanos) * bytesPerSecond / 1e9);
            lastNanos = now;
            tokens -= n;
            waitNanos = tokens >= 0 ? 0 : (long) (-tokens / bytesPerSecond * 1e9);
        }
        if (waitNanos > 0) {
            // the rate is the point: waiting for time to pass is exactly what is emulated
            LockSupport.parkNanos(waitNanos);
            if (Thread.interrupted()) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A stream whose reads draw from this bucket. */
    public InputStream limit(InputStream in) {
        return new FilterInputStream(in) {
            @Override
            public int read() throws IOException {
                int b = super.read();
                if (b >= 0) {
                    take(1);
                }
                return b;
            }

            @Override
            public int read(byte[] buf, int off, int len) throws IOException {
                int n = super.read(buf, off, Math.min(len, 64 * 1024));
                if (n > 0) {
                    take(n);
                }
                return n;
            }
        };
    }
}
