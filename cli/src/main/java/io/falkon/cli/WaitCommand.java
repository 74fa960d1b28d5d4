package io.falkon.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.time.Duration;
import java.util.concurrent.Callable;

@Command(name = "wait", mixinStandardHelpOptions = true,
        description = "Wait until a detached instance has finished every task; exit 0 iff every task succeeded.")
final class WaitCommand implements Callable<Integer> {
    /** Exit code when --timeout passed first. */
    static final int EXIT_TIMEOUT = 124;

    @Mixin
    InstanceRef instance;

    @Option(names = "--timeout", paramLabel = "SECONDS", description = "give up after this long (exit "
            + EXIT_TIMEOUT + "; the instance keeps running)")
    Double timeoutSeconds;

    @Option(names = "--json", description = "print the instance's status document at the end")
    boolean json;

    @Override
    public Integer call() throws Exception {
        Logging.level("WARN");
        Duration timeout = null;
        if (timeoutSeconds != null) {
            if (timeoutSeconds <= 0) {
                throw new Falkon.UserError("--timeout must be positive");
            }
            timeout = Duration.ofMillis(Math.round(timeoutSeconds * 1000));
        }
        String id;
        JsonNode s;
        try (Takeover t = new Takeover(instance.connect(), instance.record().key(), false)) {
            id = Long.toUnsignedString(t.instance().id(), 16);
            s = t.awaitFinished(timeout);
        }
        long unfinished = Takeover.unfinished(s);
        if (json) {
            System.out.println(s);
        } else {
            System.out.println(summary(id, s));
        }
        if (unfinished > 0) {
            System.err.println("falkon wait: " + unfinished + " task(s) still unfinished after " + timeoutSeconds
                    + " s; the instance keeps running");
            return EXIT_TIMEOUT;
        }
        if (s.path("failed").asLong() + s.path("cancelled").asLong() > 0) {
            System.err.println("see them with: falkon results " + id + " --failed");
            return 1;
        }
        return 0;
    }

    /** {@code instance 3f2a (name): 20000 tasks: 19997 succeeded, 2 failed, 1 cancelled, 0 unfinished} */
    static String summary(String id, JsonNode s) {
        long cancelled = s.path("cancelled").asLong();
        return String.format("instance %s (%s): %d tasks: %d succeeded, %d failed%s, %d unfinished", id,
                s.path("name").asText(), s.path("highestTaskId").asLong() + 1, s.path("succeeded").asLong(),
                s.path("failed").asLong(), cancelled == 0 ? "" : ", " + cancelled + " cancelled",
                Takeover.unfinished(s));
    }
}
