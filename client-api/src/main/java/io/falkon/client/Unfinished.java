package io.falkon.client;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** How many tasks of an instance have no result yet, and waiting until none is left. */
final class Unfinished {
    private final AtomicInteger count = new AtomicInteger();
    private final Object idle = new Object();

    void add() {
        count.incrementAndGet();
    }

    /** {@code n} tasks finished; wakes the waiters when none is left. */
    void finished(int n) {
        if (count.addAndGet(-n) == 0) {
            synchronized (idle) {
                idle.notifyAll();
            }
        }
    }

    int get() {
        return count.get();
    }

    void awaitNone() throws InterruptedException {
        synchronized (idle) {
            while (count.get() > 0) {
                idle.wait(1000);
            }
        }
    }

    /** Whether none was left within {@code timeout}. */
    boolean awaitNone(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (idle) {
            while (count.get() > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(idle, left);
            }
        }
        return true;
    }

    /** The monitor waiters sleep on, for a caller waiting for something else that also changes with the count. */
    Object monitor() {
        return idle;
    }
}
