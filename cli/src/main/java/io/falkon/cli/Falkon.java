package io.falkon.cli;

import io.falkon.client.FalkonException;
import io.falkon.executor.Executor;
import io.falkon.executor.ExecutorCommand;
import io.falkon.executor.LogConfigurator;
import io.falkon.protocol.Protocol;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;

/**
 * The {@code falkon} command. Its top level and {@code falkon run} are picocli models built in code
 * ({@link CommandModel}), the other commands picocli's annotated classes.
 */
public final class Falkon {

    /** The subcommands, in the order help lists them ({@code bench} comes last, when it is there). */
    static final List<String> COMMANDS = List.of("run", "dispatcher", "executor", "submit", "list", "wait", "results",
            "cancel", "status", "provision", "node", "help");

    /** The subcommand called {@code name} (its model, or its annotated object); null for none. */
    private static Object command(String name) {
        return switch (name) {
            case "run" -> new RunCommand().model();
            case "dispatcher" -> new DispatcherCommand();
            case "executor" -> new ExecutorCommand();
            case "submit" -> new SubmitCommand();
            case "list" -> new ListCommand();
            case "wait" -> new WaitCommand();
            case "results" -> new ResultsCommand();
            case "cancel" -> new CancelCommand();
            case "status" -> new StatusCommand();
            case "provision" -> new ProvisionCommand();
            case "node" -> new NodeCommand();
            case "help" -> new CommandLine.HelpCommand();
            default -> null;
        };
    }

    /** Exit code for bad usage or bad input (a bad task file line, an unreachable dispatcher). */
    static final int EXIT_USAGE = 2;

    public static void main(String[] args) {
        StartupTrace.mark("main");
        skipUnusedWork(args.length == 0 ? null : args[0]);
        LogConfigurator.forFalkonPrograms();
        Executor.preferFastSpawn();
        StartupTrace.mark("logging");
        String[] given = args;
        args = ArgumentSources.takeFrom(args); // GNU parallel's ::: values are the user's, not options
        RunCommand plain = args == given && args.length > 1 && args[0].equals("run")
                ? RunCommand.plain(List.of(args).subList(1, args.length)) : null;
        int exit;
        if (plain != null) {
            StartupTrace.mark("command line (plain run)");
            exit = execute("run", plain);
        } else {
            CommandLine cl = commandLine(args);
            StartupTrace.mark("command line");
            exit = cl.execute(args);
        }
        StartupTrace.mark("exit");
        System.exit(exit);
    }

    /**
     * A command configured without picocli ({@link RunCommand#plain}), run as picocli's
     * {@code execute} would run it: its exit code, or a failure reported as {@link Failure} does.
     */
    static int execute(String name, Callable<Integer> command) {
        try {
            Integer exit = command.call();
            return exit == null ? 0 : exit;
        } catch (Exception e) {
            PrintWriter err = new PrintWriter(System.err, true);
            int exit = Failure.report(e, name, err);
            err.flush();
            return exit;
        }
    }

    /**
     * Properties that spare a short command work it has no use for, each documented by its library
     * (docs/benchmarks.md, "Start-up"); one the user set wins:
     * <ul>
     * <li>two lookups of things that are not there searched the whole class path, opening each of
     * its sixty jars and reading its directory: picocli asks for Groovy's Closure class, and the JDK
     * asks every jar for a {@code SelectorProvider} service before it takes its own (named here on
     * Linux, where it is known);</li>
     * <li>picocli registers converters for the {@code java.time} and {@code java.sql} types by
     * reflection, loading each type and looking up its methods; no falkon option has one;</li>
     * <li>a command that is not one of the {@link #SERVICES} takes Netty's buffers from the heap as
     * needed ({@code io.netty.allocator.type=unpooled}) rather than from Netty's default adaptive
     * pools, whose set-up (size classes, a magazine per thread, the chunks' registry) was about 9 ms
     * of the embedded dispatcher's 60 ms start; a run of 200,000 tasks is as fast either way. The
     * services keep the pools, which pay off over hours and many connections;</li>
     * <li>such a command also tells Netty not to emit its Flight Recorder events
     * ({@code io.netty.jfr.enabled=false}, which are its pools' events): asking whether the JVM
     * has a flight recorder loaded it and set up the JDK's security properties, a few ms.</li>
     * </ul>
     *
     * @param command the subcommand named first on the command line, or null
     */
    static void skipUnusedWork(String command) {
        if (command == null || !SERVICES.contains(command)) {
            setUnlessSet(NETTY_ALLOCATOR, "unpooled");
            setUnlessSet(NETTY_JFR, "false");
        }
        setUnlessSet("picocli.disable.closures", "true");
        setUnlessSet(CONVERTERS_EXCLUDED, "java\\.(time|sql)\\..*");
        if (System.getProperty("os.name").equals("Linux") && inJavaBase(EPOLL)) {
            setUnlessSet(SELECTOR_PROVIDER, EPOLL);
        }
    }

    /** The commands that run as services, for hours, with many connections (bin/falkon lists them too). */
    static final Set<String> SERVICES = Set.of("dispatcher", "executor", "provision", "node", "bench");

    static final String NETTY_ALLOCATOR = "io.netty.allocator.type";
    static final String NETTY_JFR = "io.netty.jfr.enabled";

    /** The JDK's own selector provider on Linux (a JDK without it chooses for itself, as it would). */
    private static final String EPOLL = "sun.nio.ch.EPollSelectorProvider";

    /** Whether the JDK has this class: the boot loader answers from its module, no jar is searched. */
    private static boolean inJavaBase(String name) {
        try {
            Class.forName(name, false, null);
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    private static void setUnlessSet(String property, String value) {
        if (System.getProperty(property) == null) {
            System.setProperty(property, value);
        }
    }

    static final String CONVERTERS_EXCLUDED = "picocli.converters.excludes";
    private static final String SELECTOR_PROVIDER = "java.nio.channels.spi.SelectorProvider";

    /**
     * {@code falkon bench}, from the benchmarks module when it is on the class path (it is in the
     * build and in bin/falkon). The cli does not compile against the benchmarks: they depend on
     * every other module, and the everyday commands should not depend on them; the cli reaches them
     * only through this one name.
     */
    static final String BENCH_COMMAND = "io.falkon.bench.BenchCommand";

    /** The whole command tree, {@code falkon bench} included (for help and completion). */
    static CommandLine commandLine() {
        return commandLine(new String[0]);
    }

    /**
     * The command tree for these arguments: only the subcommand they name, when they name one
     * other than help (picocli builds every command it is given, options and all: for the whole
     * tree, with {@code falkon bench}'s twenty workloads, that was half of a short command's
     * start-up); the whole tree for help, for no command, or for a name that is none (its
     * suggestions).
     */
    static CommandLine commandLine(String[] args) {
        CommandLine cl = new CommandLine(CommandModel.command("falkon", new Falkon(), new Version(),
                "Fast and light-weight task execution: run millions of short command-line tasks.").spec());
        Object named = args.length > 0 && !args[0].equals("help") ? command(args[0]) : null;
        // each its own CommandLine first: picocli applies a command's model transformer (submit's and
        // provision's add options built in code) when it makes its CommandLine, not when one is added
        if (named != null) {
            cl.addSubcommand(new CommandLine(named));
        } else {
            COMMANDS.forEach(name -> cl.addSubcommand(new CommandLine(command(name))));
        }
        try {
            if (named == null) {
                cl.addSubcommand("bench", Class.forName(BENCH_COMMAND).getDeclaredConstructor().newInstance());
            }
        } catch (ClassNotFoundException e) {
            // a deployment without the benchmarks: no `falkon bench`
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot load " + BENCH_COMMAND + ": " + e, e);
        }
        // named classes, not lambdas: a lambda for one of picocli's interfaces keeps them out of the
        // class data archive (picocli's class files are older than Java 6; see docs/benchmarks.md)
        cl.setExecutionStrategy(new Execution());
        cl.setParameterExceptionHandler(new UsageError());
        cl.setExecutionExceptionHandler(new Failure());
        return cl;
    }

    /** Runs the command named last, as picocli's default does; {@code falkon bench} logs only problems. */
    private static final class Execution implements CommandLine.IExecutionStrategy {
        @Override
        public int execute(CommandLine.ParseResult parsed) {
            // benchmarks print tables; the services they start should only log problems
            if (parsed.subcommand() != null && parsed.subcommand().commandSpec().name().equals("bench")) {
                Logging.level("WARN");
            }
            return new CommandLine.RunLast().execute(parsed);
        }
    }

    /** Bad usage: picocli's message, its suggestions (a mistyped option or command), and where to look. */
    private static final class UsageError implements CommandLine.IParameterExceptionHandler {
        @Override
        public int handleParseException(CommandLine.ParameterException e, String[] args) {
            CommandLine cmd = e.getCommandLine();
            List<String> options = e instanceof CommandLine.UnmatchedArgumentException u
                    ? u.getUnmatched().stream().filter(a -> a.startsWith("-")).toList() : List.of();
            // an unknown option is what is wrong, not the arguments picocli could not place after it
            cmd.getErr().println("falkon: " + (options.isEmpty() ? e.getMessage()
                    : "unknown option" + (options.size() > 1 ? "s " : " ") + String.join(", ", options)));
            CommandLine.UnmatchedArgumentException.printSuggestions(e, cmd.getErr());
            String name = cmd.getCommandSpec().qualifiedName(" ");
            cmd.getErr().println("see '" + (name.equals("falkon") ? "falkon help" : "falkon help "
                    + name.substring("falkon ".length())) + "'");
            return EXIT_USAGE;
        }
    }

    /** A command that failed: expected failures get one line, anything else a stack trace. */
    private static final class Failure implements CommandLine.IExecutionExceptionHandler {
        @Override
        public int handleExecutionException(Exception e, CommandLine cmd, CommandLine.ParseResult parsed) {
            return report(e, cmd.getCommandName(), cmd.getErr());
        }

        static int report(Exception e, String command, PrintWriter err) {
            if (e instanceof UserError || e instanceof FalkonException
                    || e instanceof TaskFile.BadLine || e instanceof IOException) {
                err.println("falkon " + command + ": " + e.getMessage());
            } else {
                e.printStackTrace(err);
            }
            return EXIT_USAGE;
        }
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
