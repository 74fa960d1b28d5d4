package io.falkon.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

import java.nio.channels.spi.SelectorProvider;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link Falkon#skipUnusedWork}: the lookups that would open every jar of the class path are told
 * not to search, picocli's converters for {@code java.time} and {@code java.sql} types are left
 * out, and a value the user gave wins (docs/benchmarks.md, "Start-up").
 */
class UnusedWorkTest {
    private static final String CLOSURES = "picocli.disable.closures";
    private static final String PROVIDER = "java.nio.channels.spi.SelectorProvider";
    private Properties saved;

    @BeforeEach
    void save() {
        saved = (Properties) System.getProperties().clone();
        System.clearProperty(CLOSURES);
        System.clearProperty(PROVIDER);
        System.clearProperty(Falkon.CONVERTERS_EXCLUDED);
        System.clearProperty(Falkon.NETTY_ALLOCATOR);
        System.clearProperty(Falkon.NETTY_JFR);
    }

    @AfterEach
    void restore() {
        System.setProperties(saved);
    }

    @Test
    void theLookupsAreSkipped() {
        Falkon.skipUnusedWork("run");
        assertEquals("true", System.getProperty(CLOSURES));
        if (System.getProperty("os.name").equals("Linux")) {
            // the name given is the provider the JDK would have chosen by itself
            assertEquals(SelectorProvider.provider().getClass().getName(), System.getProperty(PROVIDER));
        }
    }

    @Test
    void aShortCommandTakesNettysBuffersFromTheHeapAndAServiceKeepsThePools() {
        Falkon.skipUnusedWork("status");
        assertEquals("unpooled", System.getProperty(Falkon.NETTY_ALLOCATOR));
        assertEquals("false", System.getProperty(Falkon.NETTY_JFR));
        System.clearProperty(Falkon.NETTY_ALLOCATOR);
        Falkon.skipUnusedWork(null); // no command: help
        assertEquals("unpooled", System.getProperty(Falkon.NETTY_ALLOCATOR));
        for (String service : List.of("dispatcher", "executor", "provision", "node", "bench")) {
            System.clearProperty(Falkon.NETTY_ALLOCATOR);
            System.clearProperty(Falkon.NETTY_JFR);
            Falkon.skipUnusedWork(service);
            assertEquals(null, System.getProperty(Falkon.NETTY_ALLOCATOR), service);
            assertEquals(null, System.getProperty(Falkon.NETTY_JFR), service);
        }
    }

    @Test
    void theUsersValuesWin() {
        System.setProperty(CLOSURES, "false");
        System.setProperty(PROVIDER, "com.example.Provider");
        System.setProperty(Falkon.CONVERTERS_EXCLUDED, "");
        System.setProperty(Falkon.NETTY_ALLOCATOR, "pooled");
        System.setProperty(Falkon.NETTY_JFR, "true");
        Falkon.skipUnusedWork("run");
        assertEquals("false", System.getProperty(CLOSURES));
        assertEquals("com.example.Provider", System.getProperty(PROVIDER));
        assertEquals("", System.getProperty(Falkon.CONVERTERS_EXCLUDED));
        assertEquals("pooled", System.getProperty(Falkon.NETTY_ALLOCATOR));
        assertEquals("true", System.getProperty(Falkon.NETTY_JFR));
    }

    @Command(name = "sample")
    static final class Sample {
        @Option(names = "--n")
        int n;
        @Option(names = "--path")
        Path path;
        @Option(names = "--ids", split = ",")
        List<Integer> ids;
        @Option(names = "--wait")
        Duration wait;
    }

    @Test
    void theTypesOfFalkonsOptionsStillConvertAndTimeTypesDoNot() {
        Falkon.skipUnusedWork("run");
        Sample s = new Sample();
        new CommandLine(s).parseArgs("--n", "3", "--path", "a/b", "--ids", "1,2");
        assertEquals(3, s.n);
        assertEquals(Path.of("a/b"), s.path);
        assertEquals(List.of(1, 2), s.ids);
        // proof that the exclusion is in force: picocli has no converter for a java.time type now
        CommandLine.ParameterException e = assertThrows(CommandLine.ParameterException.class,
                () -> new CommandLine(new Sample()).parseArgs("--wait", "PT1S"));
        assertTrue(e.getMessage().contains("Duration"), e.getMessage());
    }

    /** Every option of every command, {@code falkon bench} included, has a type picocli still converts. */
    @Test
    void noFalkonOptionNeedsAnExcludedConverter() {
        List<String> probe = new ArrayList<>();
        collect(new CommandLine(new Sample()).getCommandSpec(), probe);
        assertEquals(List.of("sample --wait=<wait>: java.time.Duration"), probe); // the check sees such an option
        List<String> needing = new ArrayList<>();
        collect(Falkon.commandLine().getCommandSpec(), needing);
        assertEquals(List.of(), needing, "options of a java.time or java.sql type: picocli has no converter for "
                + "them (Falkon.skipUnusedWork excludes it)");
    }

    private static void collect(CommandSpec spec, List<String> needing) {
        for (ArgSpec arg : spec.args()) {
            for (Class<?> type : arg.auxiliaryTypes()) {
                if (type.getName().matches("java\\.(time|sql)\\..*")) {
                    needing.add(spec.qualifiedName() + " " + (arg.isOption() ? ((CommandLine.Model.OptionSpec) arg).longestName()
                            + "=" : "") + arg.paramLabel() + ": " + type.getName());
                }
            }
        }
        spec.subcommands().values().forEach(sub -> collect(sub.getCommandSpec(), needing));
    }
}
