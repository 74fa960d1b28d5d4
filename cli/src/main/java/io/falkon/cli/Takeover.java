package io.falkon.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.client.FalkonClient;
import io.falkon.client.FalkonException;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;

/**
 * A detached instance taken over for a moment (by {@code wait}, {@code results}, {@code cancel},
 * {@code --rerun-failed}) without taking its results away: they are received but not acknowledged,
 * so the dispatcher keeps them for the next look. Closing lets the instance go again, running, its
 * lease starting anew; {@link #cancel()} destroys it instead.
 */
final class Takeover implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The longest a takeover waits for the results the dispatcher said it is sending. */
    private static final Duration REDELIVERY_TIMEOUT = Duration.ofSeconds(120);

    private final FalkonClient client;
    private final Instance instance;
    private final Object arrived = new Object();
    /** By task id; null when results are only counted. */
    private final Map<Long, TaskResult> results;
    private long received;
    private boolean gone;

    /** @param keep whether to keep every result received (else only count them) */
    Takeover(FalkonClient client, String key, boolean keep) {
        this.client = client;
        this.results = keep ? new ConcurrentSkipListMap<>() : null;
        this.instance = client.attachKeepingResults(key, this::received);
    }

    private void received(TaskResult r) {
        if (results != null) {
            results.put(r.taskId(), r);
        }
        synchronized (arrived) {
            received++;
            arrived.notifyAll();
        }
    }

    /** Waits until every result the dispatcher had kept has arrived. */
    Takeover awaitKept() throws InterruptedException {
        long deadline = System.nanoTime() + REDELIVERY_TIMEOUT.toNanos();
        synchronized (arrived) {
            while (received < instance.redelivered()) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || instance.lostCause() != null) {
                    throw new FalkonException(null, "only " + received + " of the " + instance.redelivered()
                            + " kept results arrived" + (instance.lostCause() == null ? " within "
                            + REDELIVERY_TIMEOUT.toSeconds() + " s" : ": " + instance.lostCause().getMessage()));
                }
                TimeUnit.NANOSECONDS.timedWait(arrived, left);
            }
        }
        return this;
    }

    /**
     * Waits until the instance has no queued or running task (or {@code timeout} passes, null for no
     * limit), asking the dispatcher again whenever a result arrives and at least every second.
     *
     * @return the instance's last status document
     */
    JsonNode awaitFinished(Duration timeout) throws InterruptedException {
        long deadline = timeout == null ? Long.MAX_VALUE : System.nanoTime() + timeout.toNanos();
        while (true) {
            long seen;
            synchronized (arrived) {
                seen = received;
            }
            JsonNode s = status();
            if (unfinished(s) == 0 || System.nanoTime() >= deadline) {
                return s;
            }
            synchronized (arrived) {
                if (received == seen) {
                    long left = Math.min(TimeUnit.SECONDS.toNanos(1), deadline - System.nanoTime());
                    TimeUnit.NANOSECONDS.timedWait(arrived, Math.max(1, left));
                }
            }
        }
    }

    /** The instance's status document: queued, running, completed, succeeded, failed, cancelled, ... */
    JsonNode status() {
        try {
            return JSON.readTree(instance.status());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static long unfinished(JsonNode status) {
        return status.path("queued").asLong() + status.path("waiting").asLong() + status.path("running").asLong();
    }

    /** The results kept (by task id), when constructed to keep them. */
    Map<Long, TaskResult> results() {
        return results;
    }

    Instance instance() {
        return instance;
    }

    /** Destroys the instance: its unfinished tasks are cancelled and its kept results dropped. */
    void cancel() {
        gone = true;
        instance.close();
    }

    /** Lets the instance go again, still running (unless cancelled), and closes the connection. */
    @Override
    public void close() {
        try {
            if (!gone && instance.lostCause() == null) {
                instance.detach();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            client.close();
        }
    }
}
