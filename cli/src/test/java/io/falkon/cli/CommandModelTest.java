package io.falkon.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.AnnotatedElement;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The command line's models built in code ({@link CommandModel}): {@code falkon run}'s options
 * reach its fields, its defaults are the fields' values, {@code submit} and {@code provision}
 * share the same options, and the table of subcommands names each as it calls itself.
 */
class CommandModelTest {

    private static RunCommand parseRun(String... options) {
        List<String> args = new ArrayList<>(List.of("run"));
        args.addAll(List.of(options));
        String[] all = args.toArray(String[]::new);
        CommandLine cl = Falkon.commandLine(all);
        cl.parseArgs(all);
        return (RunCommand) cl.getSubcommands().get("run").getCommandSpec().userObject();
    }

    @Test
    void runsOptionsReachItsFieldsAndThoseOfItsSharedOptions() {
        RunCommand r = parseRun("--executors", "3", "-v", "--store=/data", "-q", "--retries", "2", "--halt",
                "soon,fail=10%", "--provisioner", "slurm", "--max-nodes", "7", "--idle", "2.5", "tasks.txt");
        assertEquals(3, r.executors);
        assertTrue(r.verbose);
        assertEquals(Path.of("/data"), r.store);
        assertEquals(List.of("tasks.txt"), r.workload.words);
        assertTrue(r.workload.quiet);
        assertEquals(2, r.workload.retriesOnFailure);
        assertEquals("soon,fail=10%", r.workload.halt);
        assertEquals("slurm", r.provision.lrm);
        assertEquals(7, r.provision.maxNodes);
        assertEquals(2.5, r.provision.idleSeconds);
        assertEquals(r.workload.command.name(), "run"); // what --results' rerun command is built from
    }

    /** The command lines configured without picocli ({@link RunCommand#plain}): the same command as picocli makes. */
    @Test
    void aPlainRunIsConfiguredExactlyAsPicocliConfiguresIt() {
        for (List<String> words : List.of(List.of("tasks.txt"), List.of("-q", "tasks.txt"),
                List.of("tasks.txt", "--quiet"), List.of("-v", "-q", "-"), List.of("--verbose", "dir/my tasks.txt"),
                List.of("-q", "tasks.txt", "-v"), List.of("--json", "t.txt"), List.of("-q", "--json", "--store", ".",
                        "workflow.jsonl"), List.of("--store=/data/x y", "t.txt"), List.of("t.txt", "--store", "s"),
                List.of("-j", "2", "t.txt"), List.of("--jobs", "16", "-q", "t.txt"), List.of("--jobs=007", "t.txt"),
                List.of("-j", "0", "t.txt"), List.of("-j", "010", "t.txt"), List.of("-j", "999999999", "--json", "-v", "--store=.", "-q", "t.txt"))) {
            RunCommand plain = RunCommand.plain(words);
            assertNotNull(plain, words.toString());
            RunCommand parsed = parseRun(words.toArray(String[]::new));
            // every field of the command and of its option groups, the parse result's record aside
            assertThat(plain).as(words.toString()).usingRecursiveComparison().ignoringFields("workload.command")
                    .isEqualTo(parsed);
        }
        assertThat(RunCommand.plain(List.of("-q", "t.txt"))).usingRecursiveComparison()
                .ignoringFields("workload.command").isNotEqualTo(parseRun("t.txt")); // the comparison sees -q
    }

    /** Anything else is picocli's to parse: more options, help, two files, @FILE, a flag twice, clustered flags. */
    @Test
    void everyOtherRunCommandLineGoesToPicocli() {
        for (List<String> words : List.<List<String>>of(List.of(), List.of("-q"), List.of("a.txt", "b.txt"),
                List.of("-q", "-q", "a.txt"), List.of("-v", "--verbose", "a.txt"), List.of("--help"),
                List.of("-h", "a.txt"), List.of("-V"), List.of("@args"), List.of("--json", "--json", "a.txt"),
                List.of("-j2", "a.txt"), List.of("-j=2", "a.txt"), List.of("-j", "+2", "a.txt"),
                List.of("-j", "1234567890", "a.txt"), List.of("-j", "0x10", "a.txt"), List.of("-j", "2", "-j", "3", "a.txt"),
                List.of("a.txt", "-j"), List.of("--store", "a.txt"), List.of("--store", "-d", "a.txt"),
                List.of("--store=", "a.txt"), List.of("--store", "@dir", "a.txt"), List.of("--store", "a\0b", "a.txt"),
                List.of("--store", "a", "--store=b", "a.txt"), List.of("--json=true", "a.txt"),
                List.of("--slots=2", "a.txt"), List.of("-qv", "a.txt"), List.of("--", "a.txt"), List.of("-x", "a.txt"),
                List.of(""), List.of("--quiet=true", "a.txt"), List.of("a.txt", "--results", "r.jsonl"))) {
            assertNull(RunCommand.plain(words), words.toString());
        }
    }

    @Test
    void anOptionNotGivenKeepsItsFieldsValue() {
        RunCommand r = parseRun("tasks.txt");
        RunCommand fresh = new RunCommand();
        assertEquals(fresh.executors, r.executors);
        assertEquals(fresh.prefetch, r.prefetch);
        assertEquals(fresh.gccThreshold, r.gccThreshold);
        assertNull(r.slots);
        assertFalse(r.workload.quiet);
        assertEquals(new WorkloadOptions().bundle, r.workload.bundle);
        assertEquals(new ProvisionOptions().pe, r.provision.pe);
        assertNull(r.provision.lrm);
    }

    @Test
    void helpShowsTheFieldsValuesAsDefaultsAndTheProvisionersHeading() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = Falkon.commandLine(new String[]{"run"});
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        assertEquals(0, cl.execute("run", "--help"));
        String help = out.toString().replaceAll("\\s+", " "); // as one line, however picocli wraps it
        assertTrue(help.contains("executor processes to start (default: " + new RunCommand().executors + ")"), help);
        assertTrue(help.contains("--executor=IMPL"), help);
        assertTrue(help.contains("--executors=<executors>"), help);
        assertTrue(help.contains("-q, --quiet"), help);
        assertTrue(help.contains("(or N% of them)"), help); // a description's % as printed
        assertTrue(help.contains("Executors from a batch scheduler instead of this machine"), help);
        assertTrue(help.lastIndexOf("--provisioner=LRM") > help.indexOf("Executors from a batch scheduler"), help);
        assertEquals("", err.toString()); // picocli warns here about a description it cannot format
    }

    @Test
    void submitAndProvisionHaveTheOptionsRunShares() {
        String[] submit = {"submit", "--dispatcher", "127.0.0.1:1", "--retries", "4", "tasks.txt"};
        CommandLine cl = Falkon.commandLine(submit);
        cl.parseArgs(submit);
        SubmitCommand s = cl.getSubcommands().get("submit").getCommand();
        assertEquals(List.of("tasks.txt"), s.workload.words);
        assertEquals(4, s.workload.retriesOnFailure);
        assertEquals("submit", s.workload.command.name());

        String[] provision = {"provision", "--dispatcher", "127.0.0.1:1", "--provisioner", "sge", "--pe", "mpi"};
        cl = Falkon.commandLine(provision);
        cl.parseArgs(provision);
        ProvisionCommand p = cl.getSubcommands().get("provision").getCommand();
        assertEquals("sge", p.provision.lrm);
        assertEquals("mpi", p.provision.pe);
    }

    @Test
    void eachSubcommandIsCalledAsTheTableNamesItAndANamedOneIsBuiltAlone() {
        List<String> names = new ArrayList<>(Falkon.commandLine().getSubcommands().keySet());
        names.remove("bench"); // there when the benchmarks are on the class path
        assertEquals(Falkon.COMMANDS, names);
        for (String name : Falkon.COMMANDS) {
            if (!name.equals("help")) {
                assertEquals(List.of(name), List.copyOf(Falkon.commandLine(new String[]{name}).getSubcommands()
                        .keySet()), name);
            }
        }
    }

    /** Annotations on these classes would be ignored: their options are declared in code. */
    @Test
    void theClassesWhoseModelIsBuiltInCodeCarryNoPicocliAnnotations() {
        for (Class<?> c : List.of(Falkon.class, RunCommand.class, WorkloadOptions.class, ProvisionOptions.class)) {
            List<AnnotatedElement> members = new ArrayList<>(List.of(c));
            members.addAll(List.of(c.getDeclaredFields()));
            members.addAll(List.of(c.getDeclaredMethods()));
            for (AnnotatedElement m : members) {
                for (var a : m.getAnnotations()) {
                    assertFalse(a.annotationType().getName().startsWith("picocli."), c.getSimpleName() + " " + m
                            + ": @" + a.annotationType().getSimpleName());
                }
            }
        }
    }

    static final class Target {
        int count = 5;
    }

    @Test
    void aFieldThatIsNotThereIsNamedWhenTheModelIsBuilt() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> CommandModel.of(new Target()).option("cuont", "--count", "how many"));
        assertTrue(e.getMessage().contains("no field cuont"), e.getMessage());
        Target t = new Target();
        CommandLine cl = new CommandLine(CommandModel.of(t).option("count", "--count", "how many").spec());
        cl.parseArgs("--count", "8");
        assertEquals(8, t.count);
        cl.parseArgs(); // parsed again: back to the field's first value, as with annotations
        assertEquals(5, t.count);
    }

    @Test
    void anOptionsTypeIsItsFieldsType() {
        CommandLine cl = new CommandLine(CommandModel.of(new Target()).option("count", "--count", "how many").spec());
        assertThrows(CommandLine.ParameterException.class, () -> cl.parseArgs("--count", "many"));
    }
}
