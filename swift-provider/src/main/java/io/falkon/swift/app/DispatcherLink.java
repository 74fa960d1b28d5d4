package io.falkon.swift.app;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import io.falkon.protocol.TaskSpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Swift's connection to one Falkon dispatcher, shared by every app of the Swift run: one client
 * connection and one instance. {@link #submit} only queues the job (Swift's thread never waits);
 * a sender thread takes what arrives within {@link #LINGER_MILLIS} of the first job and submits it
 * as one bundle. Outcomes are reported on a thread of their own, never the connection's. The
 * instance has a lease, so a dispatcher restarted from its journal is reconnected to and the
 * apps carry on; a dispatcher lost for good fails the apps waiting on it, saying so.
 */
public final class DispatcherLink implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DispatcherLink.class);
    /** How long the first job of a bundle waits for others. */
    static final long LINGER_MILLIS = 2;
    static final int BUNDLE = 1000;
    private static final ConcurrentHashMap<Options, DispatcherLink> LINKS = new ConcurrentHashMap<>();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(DispatcherLink::closeAll, "falkon-swift-close"));
    }

    /** Where a link goes and how it authenticates. */
    public record Options(String address, ClientOptions client) {
    }

    /** A job on its way: cancelling it only stops its outcome from being reported. */
    public static final class Submitted {
        private volatile boolean cancelled;

        public void cancel() {
            cancelled = true;
        }
    }

    private record Job(AppJob app, Consumer<Outcome> onOutcome, Submitted handle) {
    }

    private final Options options;
    private final FalkonClient client;
    private final Instance instance;
    private final LinkedBlockingQueue<Job> queue = new LinkedBlockingQueue<>();
    private final ExecutorService outcomes;
    private final Thread sender;
    private final AtomicLong bundles = new AtomicLong();
    private volatile boolean closed;

    private DispatcherLink(Options options) {
        this.options = options;
        this.client = FalkonClient.connect(options.address(), options.client());
        this.instance = client.createInstance("swift");
        this.outcomes = Executors.newSingleThreadExecutor(r -> daemon(r, "falkon-swift-status"));
        this.sender = daemon(this::send, "falkon-swift-submit");
        sender.start();
        log.info("Swift apps go to the Falkon dispatcher at {} (instance {})", options.address(),
                Long.toUnsignedString(instance.id(), 16));
    }

    /** The link to this dispatcher, connecting on first use. */
    public static DispatcherLink of(Options options) {
        return LINKS.computeIfAbsent(options, DispatcherLink::new);
    }

    /** Queues a job; {@code onOutcome} is called once, on the link's status thread, unless cancelled. */
    public Submitted submit(AppJob job, Consumer<Outcome> onOutcome) {
        Submitted handle = new Submitted();
        Job j = new Job(job, onOutcome, handle);
        if (closed) {
            fail(List.of(j), new IllegalStateException("the link is closed"));
        } else {
            queue.add(j);
        }
        return handle;
    }

    /** Bundles submitted so far. */
    long bundles() {
        return bundles.get();
    }

    private void send() {
        List<Job> batch = new ArrayList<>();
        try {
            while (!closed) {
                Job first = queue.poll(1, TimeUnit.SECONDS);
                if (first == null) {
                    continue;
                }
                batch.add(first);
                long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LINGER_MILLIS);
                Job next;
                while (batch.size() < BUNDLE
                        && (next = queue.poll(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS)) != null) {
                    batch.add(next);
                }
                submit(batch);
                batch.clear();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<Job> left = new ArrayList<>();
        queue.drainTo(left);
        fail(left, new IllegalStateException("the link is closed"));
    }

    private void submit(List<Job> batch) {
        List<TaskSpec> specs = new ArrayList<>(batch.size());
        for (Job j : batch) {
            specs.add(j.app().task());
        }
        List<CompletableFuture<TaskResult>> futures;
        try {
            futures = instance.submit(specs);
        } catch (RuntimeException e) {
            fail(batch, e);
            retire();
            return;
        }
        bundles.incrementAndGet();
        for (int i = 0; i < batch.size(); i++) {
            Job j = batch.get(i);
            futures.get(i).whenCompleteAsync((r, err) -> {
                if (j.handle().cancelled) {
                    return;
                }
                if (err != null) {
                    // let the lost link go before Swift hears of the failure: a job it then submits
                    // must dial afresh, not find the dead link still registered
                    if (instance.lostCause() != null) {
                        retire();
                    }
                    j.onOutcome().accept(Outcome.lost(options.address(), err.getCause() != null ? err.getCause() : err));
                } else {
                    j.onOutcome().accept(Outcome.of(r, j.app()));
                }
            }, outcomes);
        }
    }

    private void fail(List<Job> jobs, Throwable cause) {
        for (Job j : jobs) {
            if (!j.handle().cancelled) {
                outcomes.execute(() -> j.onOutcome().accept(Outcome.lost(options.address(), cause)));
            }
        }
    }

    /** A link whose instance is lost is replaced: the next job connects afresh. */
    private void retire() {
        if (LINKS.remove(options, this)) {
            log.warn("the Falkon dispatcher at {} is lost: {}", options.address(),
                    instance.lostCause() == null ? "submission failed" : instance.lostCause().getMessage());
            closed = true;
            sender.interrupt();
            client.close();
        }
    }

    @Override
    public void close() {
        LINKS.remove(options, this);
        closed = true;
        sender.interrupt();
        try {
            client.close(); // destroys the instance: apps still running are cancelled
        } finally {
            outcomes.shutdown();
        }
    }

    static void closeAll() {
        for (DispatcherLink l : List.copyOf(LINKS.values())) {
            try {
                l.close();
            } catch (RuntimeException e) {
                // exiting anyway
            }
        }
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }
}
