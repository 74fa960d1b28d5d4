package io.falkon.executor;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator.ExecutionStatus;
import ch.qos.logback.core.ConsoleAppender;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class LogConfiguratorTest {
    /** Sees no logback.xml of anyone's (the bootstrap loader's resources only). */
    private static final ClassLoader NOTHING = new URLClassLoader(new URL[0], null);

    @TempDir
    Path dir;

    @Test
    void withNoConfigurationOfTheUsersItLogsEachLineToStderrInTheFalkonFormat() {
        PrintStream saved = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        LoggerContext context = new LoggerContext();
        try {
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            context.setMDCAdapter(new ch.qos.logback.classic.util.LogbackMDCAdapter()); // as SLF4J's binding gives it
            context.start();
            LogConfigurator c = new LogConfigurator(NOTHING);
            c.setContext(context);
            assertThat(c.configure(context)).isEqualTo(ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY);
            context.getLogger("io.falkon.dispatcher.Dispatcher").info("listening on {}", "127.0.0.1:50500");
            context.getLogger("io.netty.channel.Foo").info("not shown: Netty logs warnings only");
            context.getLogger("io.netty.channel.Foo").warn("shown");
            context.getLogger("x.Y").error("failed", new IllegalStateException("boom"));
        } finally {
            System.setErr(saved);
        }
        String out = err.toString(StandardCharsets.UTF_8);
        assertThat(out.lines().filter(l -> l.matches("\\d{4}-.*"))).hasSize(3);
        assertThat(out.lines().findFirst().orElseThrow())
                .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z INFO  Dispatcher - listening on 127.0.0.1:50500");
        assertThat(out).contains("WARN  Foo - shown").doesNotContain("not shown");
        assertThat(out).contains("ERROR Y - failed\njava.lang.IllegalStateException: boom\n\tat ");
        assertThat(context.getLogger(Logger.ROOT_LOGGER_NAME).getLevel()).isEqualTo(Level.INFO);
        assertThat(context.getLogger(Logger.ROOT_LOGGER_NAME).getAppender("STDERR"))
                .isInstanceOf(ConsoleAppender.class);
        context.stop();
    }

    @Test
    void theLevelComesFromFalkonLogLevel() {
        System.setProperty("falkon.log.level", "DEBUG");
        LoggerContext context = new LoggerContext();
        try {
            LogConfigurator c = new LogConfigurator(NOTHING);
            c.setContext(context);
            c.configure(context);
            assertThat(context.getLogger(Logger.ROOT_LOGGER_NAME).getLevel()).isEqualTo(Level.DEBUG);
        } finally {
            System.clearProperty("falkon.log.level");
            context.stop();
        }
    }

    @Test
    void aConfigurationOfTheUsersOwnWins() throws Exception {
        // a logback.xml on the class path (as in this module's tests: logback-test.xml)
        Files.writeString(dir.resolve("logback.xml"), "<configuration/>");
        try (URLClassLoader theirs = new URLClassLoader(new URL[] {dir.toUri().toURL()}, null)) {
            LoggerContext context = new LoggerContext();
            LogConfigurator c = new LogConfigurator(theirs);
            c.setContext(context);
            assertThat(c.configure(context)).isEqualTo(ExecutionStatus.INVOKE_NEXT_IF_ANY);
            assertThat(context.getLogger(Logger.ROOT_LOGGER_NAME).getAppender("STDERR")).isNull();
        }
        // or one named by the property, even in a Falkon program
        System.setProperty("logback.configurationFile", dir.resolve("logback.xml").toString());
        System.setProperty(LogConfigurator.FALKON_PROGRAM, "true");
        try {
            LoggerContext context = new LoggerContext();
            LogConfigurator c = new LogConfigurator(NOTHING);
            c.setContext(context);
            assertThat(c.configure(context)).isEqualTo(ExecutionStatus.INVOKE_NEXT_IF_ANY);
        } finally {
            System.clearProperty("logback.configurationFile");
            System.clearProperty(LogConfigurator.FALKON_PROGRAM);
        }
    }

    @Test
    void aFalkonProgramUsesItsOwnWhateverLogbackXmlItsClassPathHolds() throws Exception {
        Files.writeString(dir.resolve("logback-test.xml"), "<configuration/>");
        System.setProperty(LogConfigurator.FALKON_PROGRAM, "true");
        try (URLClassLoader tests = new URLClassLoader(new URL[] {dir.toUri().toURL()}, null)) {
            LoggerContext context = new LoggerContext();
            LogConfigurator c = new LogConfigurator(tests);
            c.setContext(context);
            assertThat(c.configure(context)).isEqualTo(ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY);
            assertThat(context.getLogger(Logger.ROOT_LOGGER_NAME).getAppender("STDERR")).isNotNull();
            context.stop();
        } finally {
            System.clearProperty(LogConfigurator.FALKON_PROGRAM);
        }
    }
}
