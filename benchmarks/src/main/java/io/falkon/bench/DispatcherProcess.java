package io.falkon.bench;

import io.falkon.protocol.auth.Token;
import io.falkon.protocol.auth.TokenSource;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A dispatcher in its own JVM (so its heap can be capped and measured), on 127.0.0.1. */
final class DispatcherProcess implements AutoCloseable {
    /**
     * {@code falkon dispatcher}, run by name: a command of the cli module, which is above this one
     * (the benchmarks run through {@code falkon bench}, whose class path has it).
     */
    static final String DISPATCHER_COMMAND = "io.falkon.cli.DispatcherCommand";
    private static final Pattern LISTENING = Pattern.compile("falkon dispatcher listening on [^:]+:(\\d+)");
    private final Process process;
    private final int port;
    /** Its token, handed over in its environment (never on its command line). */
    private final Token token;

    DispatcherProcess(List<String> jvmOptions) throws IOException {
        this(jvmOptions, List.of());
    }

    /** @param dispatcherArgs further {@code falkon dispatcher} options */
    DispatcherProcess(List<String> jvmOptions, List<String> dispatcherArgs) throws IOException {
        this(jvmOptions, dispatcherArgs, Token.random());
    }

    /** @param token the token it requires (dispatchers that one client uses together share one) */
    DispatcherProcess(List<String> jvmOptions, List<String> dispatcherArgs, Token token) throws IOException {
        this.token = token;
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
        cmd.add("-XX:+ExitOnOutOfMemoryError"); // as bin/falkon runs it
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-Dfalkon.log.level=WARN", "-cp", System.getProperty("java.class.path"),
                DISPATCHER_COMMAND, "--host", "127.0.0.1", "--port", "0"));
        cmd.addAll(dispatcherArgs);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectInput(new File("/dev/null"));
        pb.environment().put(TokenSource.ENV, token.value());
        process = pb.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String line;
        Integer p = null;
        while ((line = out.readLine()) != null) {
            Matcher m = LISTENING.matcher(line);
            if (m.find()) {
                p = Integer.parseInt(m.group(1));
                break;
            }
        }
        if (p == null) {
            process.destroyForcibly();
            throw new IOException("the dispatcher process exited without listening");
        }
        port = p;
        Thread drain = new Thread(() -> {
            try {
                out.transferTo(new PrintWriter(System.err, true));
            } catch (IOException e) {
                // the process went away
            }
        }, "dispatcher-output");
        drain.setDaemon(true);
        drain.start();
    }

    private static final Pattern HISTOGRAM_TOTAL = Pattern.compile("(?m)^Total\\s+\\d+\\s+(\\d+)\\s*$");

    /**
     * The bytes of every live object in the dispatcher's heap, exactly: {@code jcmd GC.class_histogram}
     * collects fully first and sums what is left. (The status document's figure is sampled now and
     * then, from each pool's usage after its last collection: an estimate, and possibly stale.)
     */
    long liveHeapBytes() throws IOException, InterruptedException {
        Process jcmd = new ProcessBuilder(System.getProperty("java.home") + File.separator + "bin" + File.separator
                + "jcmd", Long.toString(process.pid()), "GC.class_histogram").redirectErrorStream(true).start();
        String out = new String(jcmd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        Matcher m = HISTOGRAM_TOTAL.matcher(out);
        if (!jcmd.waitFor(60, TimeUnit.SECONDS) || jcmd.exitValue() != 0 || !m.find()) {
            throw new IOException("jcmd GC.class_histogram failed: " + out.lines().limit(5).toList());
        }
        return Long.parseLong(m.group(1));
    }

    String address() {
        return "127.0.0.1:" + port;
    }

    /** What its clients and executors present. */
    Token token() {
        return token;
    }

    int port() {
        return port;
    }

    long pid() {
        return process.pid();
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
