package io.falkon.executor;

import io.falkon.protocol.auth.Token;
import io.falkon.protocol.auth.TokenSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Executor processes on this machine (the embedded default of {@code falkon run}, and the
 * benchmarks): each is its own process running the standalone executor (a lean JVM, or the C
 * executor), dialling a dispatcher on 127.0.0.1, or, C executors started with {@link #STDIO},
 * speaking to it on their standard input and output. They exit by themselves when the dispatcher
 * closes their connection; {@link #close()} waits for that and kills stragglers.
 *
 * <p>The JVM runs {@code falkon-executor.jar} when the system property {@value #JAR_PROPERTY}
 * names it (bin/falkon sets it): one jar means few open descriptors, which the JDK closes one by
 * one in every child it starts. Otherwise it runs the executor from this JVM's class path.
 *
 * <p>The C executor ({@link Impl#C}) is the binary named by {@value #C_PROPERTY} (bin/falkon sets
 * it), else the CMake build in {@code executor-c/target/build} of this checkout, else
 * {@code falkon-executor-c} on the PATH.
 */
public final class LocalExecutors implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LocalExecutors.class);
    public static final String JAR_PROPERTY = "falkon.executor.jar";
    public static final String C_PROPERTY = "falkon.executor.c";
    /** The dispatcher an executor started with pipes is told: its parent, on its standard input and output. */
    public static final String STDIO = "stdio";
    static final String C_BINARY = "falkon-executor-c";

    /** Which executor implementation to start. */
    public enum Impl {
        JAVA,
        C;

        /** {@code java} or {@code c}, as the command line says it. */
        /** The C executor when it is built (no JVM to start, the same throughput), else the Java one. */
        public static Impl fastest() {
            try {
                cExecutable();
                return C;
            } catch (IOException e) {
                return JAVA;
            }
        }

        public static Impl parse(String s) {
            return switch (s.toLowerCase(Locale.ROOT)) {
                case "java" -> JAVA;
                case "c" -> C;
                default -> throw new IllegalArgumentException("unknown executor implementation '" + s
                        + "' (java or c)");
            };
        }
    }

    private static final boolean PROC = Files.isReadable(Path.of("/proc/self/stat"));

    private final List<Process> processes = new ArrayList<>();
    /** Per process: done once its exit has been handled ({@link #exited}). */
    private final List<CompletableFuture<Void>> exits = new ArrayList<>();
    private final CompletableFuture<Void> died = new CompletableFuture<>();
    private final CompletableFuture<Void> allGone = new CompletableFuture<>();
    /** Started and not exited. */
    private final AtomicInteger alive = new AtomicInteger();
    private volatile boolean closing;
    /** Started with {@link #STDIO}: the protocol on their standard input and output. */
    private final boolean piped;

    private LocalExecutors(boolean piped) {
        this.piped = piped;
    }

    /** The command that starts one executor of this implementation, up to its own options. */
    public static List<String> command(Impl impl) throws IOException {
        return impl == Impl.C ? cCommand() : javaCommand();
    }

    /** The command that starts one executor JVM, up to (not including) the executor's own options. */
    public static List<String> javaCommand() {
        List<String> cmd = new ArrayList<>(List.of(System.getProperty("java.home") + File.separator + "bin"
                + File.separator + "java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                // out of memory, a JVM is in no state to go on: exit, and let the dispatcher re-run its tasks
                "-XX:+ExitOnOutOfMemoryError", "-Dfalkon.log.level=WARN"));
        String jar = System.getProperty(JAR_PROPERTY);
        if (jar != null && Files.isRegularFile(Path.of(jar))) {
            cmd.addAll(List.of("-jar", jar));
        } else {
            cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), ExecutorCommand.class.getName()));
        }
        return cmd;
    }

    /**
     * The C executor's binary.
     *
     * @throws IOException naming where it was looked for, if it is not built
     */
    public static Path cExecutable() throws IOException {
        List<Path> tried = new ArrayList<>();
        String prop = System.getProperty(C_PROPERTY);
        if (prop != null) {
            tried.add(Path.of(prop));
        }
        Path dir = Path.of("").toAbsolutePath();
        for (int up = 0; up < 3 && dir != null; up++, dir = dir.getParent()) {
            tried.add(dir.resolve("executor-c").resolve("target").resolve("build").resolve(C_BINARY));
        }
        for (String p : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (!p.isEmpty()) {
                tried.add(Path.of(p, C_BINARY));
            }
        }
        for (Path p : tried) {
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return p.toAbsolutePath();
            }
        }
        throw new IOException("the C executor is not built (looked for " + C_BINARY + " via -D" + C_PROPERTY
                + ", in executor-c/target/build and on the PATH); build it with ./mvnw install -DskipTests");
    }

    /** The command that starts one C executor, up to (not including) the executor's own options. */
    public static List<String> cCommand() throws IOException {
        return new ArrayList<>(List.of(cExecutable().toString(), "--log-level", "warn"));
    }

    /**
     * Starts {@code count} Java executor JVMs that dial {@code 127.0.0.1:port}, with ids
     * {@code idPrefix-0 ...}, presenting {@code token}.
     *
     * @throws IOException if a process cannot be started
     */
    public static LocalExecutors start(int count, int slots, boolean noExec, int port, Token token, String idPrefix,
                                       List<String> extraArgs) throws IOException {
        return start(Impl.JAVA, count, slots, noExec, port, token, idPrefix, extraArgs);
    }

    /**
     * Starts {@code count} executor processes of the given implementation that dial
     * {@code 127.0.0.1:port}, with ids {@code idPrefix-0 ...}. Both take the same options. The token
     * travels in their environment ({@code FALKON_TOKEN}), never on a command line {@code ps} shows.
     *
     * @throws IOException if a process cannot be started (or the C executor is not built)
     */
    public static LocalExecutors start(Impl impl, int count, int slots, boolean noExec, int port, Token token,
                                       String idPrefix, List<String> extraArgs) throws IOException {
        return start(impl, count, slots, noExec, "127.0.0.1:" + port, token, idPrefix, extraArgs);
    }

    /**
     * Starts {@code count} executor processes that dial {@code dispatcher}: {@code HOST:PORT}, or
     * {@link #STDIO} (the C executor only: {@code falkon run}'s own executors, docs/architecture.md),
     * which speak the protocol on their standard input and output: the caller attaches each
     * {@linkplain #processes() process}'s streams to the dispatcher.
     *
     * @throws IOException if a process cannot be started (or the C executor is not built)
     */
    public static LocalExecutors start(Impl impl, int count, int slots, boolean noExec, String dispatcher, Token token,
                                       String idPrefix, List<String> extraArgs) throws IOException {
        boolean piped = dispatcher.equals(STDIO);
        if (piped && impl != Impl.C) {
            throw new IllegalArgumentException("only the C executor speaks the protocol on its standard input and "
                    + "output");
        }
        LocalExecutors ex = new LocalExecutors(piped);
        ex.alive.set(count); // before any can exit: one gone before the next starts is not all gone
        List<String> base = command(impl);
        for (int i = 0; i < count; i++) {
            List<String> cmd = new ArrayList<>(base);
            cmd.addAll(List.of("--dispatcher", dispatcher, "--slots", Integer.toString(slots),
                    "--id", idPrefix + "-" + i, "--reconnect-for", "0"));
            if (noExec) {
                cmd.add("--no-exec");
            }
            cmd.addAll(extraArgs);
            if (i > 0 && extraArgs.stream().noneMatch(a -> a.startsWith("gpus="))) {
                // one machine's GPUs, found by each executor: the first offers them, so no device is offered twice
                cmd.addAll(List.of("--resource", "gpus=0"));
            }
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
            if (!piped) {
                pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                        .redirectOutput(ProcessBuilder.Redirect.INHERIT);
            }
            pb.environment().remove(TokenSource.ENV_FILE);
            // their spools where this process keeps its temporary files ($TMPDIR, or as its JVM was told)
            pb.environment().put("TMPDIR", TempDirs.root().toString());
            if (!token.required()) {
                pb.environment().remove(TokenSource.ENV);
            } else {
                pb.environment().put(TokenSource.ENV, token.value());
            }
            try {
                Process p = pb.start();
                ex.processes.add(p);
                int n = i;
                ex.exits.add(p.onExit().thenAccept(done -> ex.exited(n, count, done.exitValue())));
            } catch (IOException e) {
                ex.close();
                throw new IOException("cannot start a local executor process: " + e.getMessage(), e);
            }
        }
        return ex;
    }

    /** Executor {@code n} of {@code count} exited: expected after {@link #leaving()} or {@link #close()}, else reported. */
    private void exited(int n, int count, int status) {
        int left = alive.decrementAndGet();
        if (closing) {
            if (left == 0) {
                allGone.complete(null);
            }
            return;
        }
        String what = "local executor " + n + " exited unexpectedly with status " + status
                + (status > 128 ? " (killed by signal " + (status - 128) + ")" : "");
        died.completeExceptionally(new IllegalStateException(what));
        if (left == 0) {
            allGone.completeExceptionally(new IllegalStateException(count == 1 ? what
                    : "every local executor exited unexpectedly (the last: " + what.substring("local ".length()) + ")"));
        } else {
            log.warn("{}; {} left", what, left);
        }
    }

    /** Fails as soon as any of the executors exits before {@link #close()}. */
    public CompletableFuture<Void> died() {
        return died;
    }

    /**
     * Completes once every executor has exited: normally when they were told to go ({@link #leaving()},
     * {@link #close()}), exceptionally, saying which went last and how, when they exited by themselves
     * (the others carry on without one that exits; the dispatcher retries its tasks).
     */
    public CompletableFuture<Void> allGone() {
        return allGone;
    }

    public List<Process> processes() {
        return List.copyOf(processes);
    }

    /**
     * The executors are about to be told to go (their dispatcher is closing): exits from now on are
     * expected, not reported. Call it before closing the dispatcher; {@link #close()} does too.
     */
    public void leaving() {
        // One that died just before (a task killed it, say) is still reported: the JVM learns of a
        // child's exit on a thread of its own, which a short run could otherwise beat to this line, and
        // the death would pass for the expected exit. /proc tells a dead child from a live one at once.
        for (int i = 0; i < processes.size(); i++) {
            if (dead(processes.get(i).pid())) {
                try {
                    exits.get(i).get(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                } catch (ExecutionException | TimeoutException e) {
                    // not reported: nothing more to wait for
                }
            }
        }
        closing = true;
    }

    /**
     * Ends the input of an executor started with pipes, which then exits (if nothing attached it to a
     * dispatcher, or the dispatcher's end is still open). On a thread of its own: closing waits for a
     * write in progress, and a write to an executor that has stopped reading waits until it is killed.
     */
    private static void endInput(Process p) {
        Thread t = new Thread(() -> {
            try {
                p.getOutputStream().close();
            } catch (IOException e) {
                log.debug("closing the input of executor process {}: {}", p.pid(), e.toString());
            }
        }, "falkon-executor-input-" + p.pid());
        t.setDaemon(true);
        t.start();
    }

    /** Exited, whether reaped yet or not (a zombie); false where there is no /proc to say. */
    static boolean dead(long pid) {
        if (!PROC) {
            return false;
        }
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            int name = stat.lastIndexOf(')'); // the state follows the command name, which may hold anything
            return name > 0 && stat.length() > name + 2 && stat.charAt(name + 2) == 'Z';
        } catch (NoSuchFileException e) {
            return true; // reaped
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** Ends the input of each executor started with pipes, waits up to 10 s for each to exit (they do when the dispatcher goes), then kills it. */
    @Override
    public void close() {
        leaving();
        for (Process p : processes) {
            if (piped) {
                endInput(p);
            }
            try {
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    log.warn("executor process {} did not exit; killing it", p.pid());
                    p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
