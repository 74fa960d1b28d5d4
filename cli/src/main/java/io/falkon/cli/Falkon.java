package io.falkon.cli;

import io.falkon.bench.BenchCommand;
import io.falkon.client.FalkonException;
import io.falkon.dispatcher.DispatcherCommand;
import io.falkon.executor.Executor;
import io.falkon.executor.ExecutorCommand;
import io.falkon.protocol.Protocol;
import picocli.CommandLine.Command;
import picocli.CommandLine;

import java.io.IOException;

/** The {@code falkon} command. */
@Command(name = "falkon", mixinStandardHelpOptions = true, versionProvider = Falkon.Version.class,
        description = "Fast and light-weight task execution: run millions of short command-line tasks.",
        subcommands = {RunCommand.class, DispatcherCommand.class, ExecutorCommand.class, SubmitCommand.class,
                StatusCommand.class, ProvisionCommand.class, BenchCommand.class, CommandLine.HelpCommand.class})
public final class Falkon {

    /** Exit code for bad usage or bad input (a bad task file line, an unreachable dispatcher). */
    static final int EXIT_USAGE = 2;

    public static void main(String[] args) {
        Executor.preferFastSpawn();
        System.exit(commandLine().execute(args));
    }

    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Falkon());
        cl.setExecutionStrategy(parsed -> {
            // benchmarks print tables; the services they start should only log problems
            if (parsed.subcommand() != null && parsed.subcommand().commandSpec().name().equals("bench")) {
                Logging.level("WARN");
            }
            return new CommandLine.RunLast().execute(parsed);
        });
        cl.setExecutionExceptionHandler((e, cmd, parsed) -> {
            // expected failures get one line; anything else a stack trace
            if (e instanceof UserError || e instanceof FalkonException
                    || e instanceof TaskFile.BadLine || e instanceof IOException) {
                cmd.getErr().println("falkon " + cmd.getCommandName() + ": " + e.getMessage());
            } else {
                e.printStackTrace(cmd.getErr());
            }
            return EXIT_USAGE;
        });
        return cl;
    }

    /** An error the user can fix; printed as one line without a stack trace. */
    static final class UserError extends RuntimeException {
        UserError(String message) {
            super(message);
        }
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Falkon.class.getPackage().getImplementationVersion();
            return new String[]{"falkon " + (v == null ? "0.1.0-SNAPSHOT" : v) + ", protocol "
                    + Protocol.VERSION};
        }
    }
}
