package io.falkon.cli;

import io.falkon.client.ClientOptions;
import io.falkon.executor.ConnectOptions;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

/** Options shared by {@code falkon submit} and {@code falkon run}. */
final class WorkloadOptions {

    @Parameters(index = "0", paramLabel = "FILE", description = "task file: one shell command per line, or a "
            + ".jsonl file of task specs; - reads commands from standard input")
    String file;

    @Option(names = "--bundle", description = "tasks per submission bundle (default: ${DEFAULT-VALUE})")
    int bundle = 1000;

    @Option(names = "--max-in-flight", description = "most unfinished tasks at once (default: ${DEFAULT-VALUE})")
    int maxInFlight = 100_000;

    @Option(names = "--timeout", paramLabel = "SECONDS",
            description = "wall-time limit for tasks that do not set one (default: none)")
    Double timeoutSeconds;

    @Option(names = "--json", description = "print one JSON summary object on stdout at the end")
    boolean json;

    @Option(names = "--results", paramLabel = "FILE", description = "write every result as a JSON line to FILE")
    Path results;

    Duration defaultWallTime() {
        if (timeoutSeconds == null) {
            return null;
        }
        if (timeoutSeconds <= 0) {
            throw new Falkon.UserError("--timeout must be positive");
        }
        return Duration.ofMillis(Math.round(timeoutSeconds * 1000));
    }

    /** Options for a client of the embedded dispatcher, which presents {@code token}. */
    ClientOptions clientOptions(String token) {
        if (bundle < 1) {
            throw new Falkon.UserError("--bundle must be at least 1");
        }
        return ClientOptions.defaults().withBundleSize(bundle).withMaxInFlight(Math.max(bundle, maxInFlight))
                .withToken(token).withClientName("falkon-cli");
    }

    /** Options for a client of a running dispatcher, reached as {@code connect} says. */
    ClientOptions clientOptions(ConnectOptions connect) {
        try {
            return clientOptions(connect.token().token().value()).withTls(connect.tls());
        } catch (IllegalArgumentException e) {
            throw new Falkon.UserError(e.getMessage());
        }
    }

    /** Checks every line of a file before anything runs, and counts the tasks; -1 for stdin. */
    long validate() throws IOException {
        return file.equals("-") ? -1 : TaskFile.validate(file, defaultWallTime());
    }

    /** Prints the summary and returns the exit code: 0 iff every task succeeded (none failed, none lost). */
    int report(Workload.Summary s) {
        if (json) {
            System.out.println(s.json());
        } else {
            System.out.println(s.text());
        }
        System.out.flush();
        return s.allSucceeded() ? 0 : 1;
    }
}
