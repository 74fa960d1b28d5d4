package io.falkon.cli;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/** A one-line progress bar on stderr (done/total, rate, ETA), shown only when stderr is a terminal. */
final class Progress implements AutoCloseable {
    private final PrintStream err = System.err;
    private final LongSupplier done;
    private final LongSupplier failed;
    private final LongSupplier cancelled;
    private final long total;
    private final long startNanos = System.nanoTime();
    private final ScheduledExecutorService timer;

    private Progress(LongSupplier done, LongSupplier failed, LongSupplier cancelled, long total) {
        this.done = done;
        this.failed = failed;
        this.cancelled = cancelled;
        this.total = total;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "falkon-progress");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleAtFixedRate(this::draw, 250, 250, TimeUnit.MILLISECONDS);
    }

    /**
     * A progress bar if stderr is a terminal, else {@code null}.
     *
     * @param done tasks that ran to their end (succeeded or failed: what the rate and the ETA count)
     */
    static Progress startIfTerminal(LongSupplier done, LongSupplier failed, LongSupplier cancelled, long total) {
        return stderrIsTerminal() ? new Progress(done, failed, cancelled, total) : null;
    }

    static boolean stderrIsTerminal() {
        try {
            String target = Files.readSymbolicLink(Path.of("/proc/self/fd/2")).toString();
            return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
        } catch (Exception e) {
            return System.console() != null;
        }
    }

    /** Clears the bar's line, so that task output printed next starts on a clean line (redrawn shortly). */
    synchronized void clear() {
        err.print("\r\033[K");
        err.flush();
    }

    private synchronized void draw() {
        long d = done.getAsLong();
        double secs = (System.nanoTime() - startNanos) / 1e9;
        double rate = secs > 0 ? d / secs : 0;
        StringBuilder sb = new StringBuilder("\r");
        if (total > 0) {
            int width = 30;
            int filled = (int) Math.min(width, width * d / total);
            sb.append('[').append("=".repeat(filled)).append(filled < width ? ">" : "")
                    .append(" ".repeat(Math.max(0, width - filled - 1))).append("] ");
            sb.append(d).append('/').append(total).append(String.format(" %3d%%", 100 * d / total));
        } else {
            sb.append(d).append(" done");
        }
        long f = failed.getAsLong();
        if (f > 0) {
            sb.append(String.format("  %,d FAILED", f));
        }
        long c = cancelled.getAsLong();
        if (c > 0) {
            sb.append(String.format("  %,d cancelled", c));
        }
        sb.append(String.format("  %,.0f tasks/s", rate));
        if (total > 0 && rate > 0 && d < total) {
            sb.append(String.format("  ETA %s", eta((total - d) / rate)));
        }
        sb.append("   ");
        err.print(sb);
        err.flush();
    }

    private static String eta(double seconds) {
        long s = (long) Math.ceil(seconds);
        return s >= 3600 ? String.format("%dh%02dm", s / 3600, (s % 3600) / 60)
                : s >= 60 ? String.format("%dm%02ds", s / 60, s % 60) : s + "s";
    }

    @Override
    public void close() {
        timer.shutdownNow();
        draw();
        err.println();
    }
}
