package io.falkon.executor;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.CoreConstants;
import ch.qos.logback.core.LayoutBase;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import ch.qos.logback.core.spi.ContextAwareBase;
import org.slf4j.Logger;

import java.time.LocalDateTime;
import java.time.ZoneOffset;

/**
 * The Falkon programs' logging, set up in code: every line to stderr as
 * {@code 2026-11-26T12:00:00.000Z INFO Dispatcher - message}, Netty at WARN, the root at
 * {@code -Dfalkon.log.level} (INFO by default). Logback finds it as a service and asks it first.
 *
 * <p>In code rather than in an XML file, with a layout of its own rather than a pattern, because
 * reading an XML configuration (Logback's Joran and the JDK's XML parser, some 600 classes) and
 * compiling a pattern took a tenth of a second of every {@code falkon} command's start
 * (docs/benchmarks.md, "Start-up"): now nothing is parsed, and a line's date is formatted only
 * when a line is written.
 *
 * <p>A configuration named with {@code -Dlogback.configurationFile} always wins. A Falkon program
 * ({@code falkon}, {@code falkon-executor.jar}) otherwise uses this one, whatever else is on its
 * class path ({@link #forFalkonPrograms}, first thing in its {@code main}). Where Falkon's jars are a
 * library in another program, a {@code logback.xml} or {@code logback-test.xml} of that program's
 * wins, as Logback would have it; this one is used only when there is none.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_LOW_PRIORITY)
public final class LogConfigurator extends ContextAwareBase implements Configurator {

    /** Set by a Falkon program's main: its logging is this, not the class path's logback.xml. */
    static final String FALKON_PROGRAM = "falkon.log.program";

    /** Where a configuration of the user's own would be found. */
    private final ClassLoader loader;

    /** For the ServiceLoader. */
    public LogConfigurator() {
        this(LogConfigurator.class.getClassLoader());
    }

    LogConfigurator(ClassLoader loader) {
        this.loader = loader;
    }

    /**
     * Called first in a Falkon program's main, before anything logs. It also names SLF4J's provider
     * ({@link LogProvider}), which spares SLF4J and Logback from opening every jar of the class path
     * to look for providers and configurators.
     */
    public static void forFalkonPrograms() {
        System.setProperty(FALKON_PROGRAM, "true");
        if (System.getProperty("slf4j.provider") == null) {
            System.setProperty("slf4j.provider", LogProvider.class.getName());
            // else SLF4J says on stderr, every time, that it was told which provider to use
            if (System.getProperty("slf4j.internal.verbosity") == null) {
                System.setProperty("slf4j.internal.verbosity", "WARN");
            }
        }
    }

    @Override
    public ExecutionStatus configure(LoggerContext context) {
        boolean theirs = System.getProperty("logback.configurationFile") != null
                || (System.getProperty(FALKON_PROGRAM) == null && (loader.getResource("logback-test.xml") != null
                        || loader.getResource("logback.xml") != null));
        if (theirs) {
            return ExecutionStatus.INVOKE_NEXT_IF_ANY;
        }
        Line line = new Line();
        line.setContext(context);
        line.start();
        LayoutWrappingEncoder<ILoggingEvent> encoder = new LayoutWrappingEncoder<>();
        encoder.setContext(context);
        encoder.setLayout(line);
        encoder.start();
        ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
        stderr.setContext(context);
        stderr.setName("STDERR");
        stderr.setTarget("System.err");
        stderr.setEncoder(encoder);
        stderr.start();
        context.getLogger("io.netty").setLevel(Level.WARN);
        // the WS interface's SOAP engine: its set-up is chatty at INFO; faults are logged by the service
        context.getLogger("org.apache.axis2").setLevel(Level.WARN);
        ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.toLevel(System.getProperty("falkon.log.level"), Level.INFO));
        root.addAppender(stderr);
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }

    /** One line per event: {@code 2026-11-26T12:00:00.000Z INFO  Dispatcher - message}, then any stack trace. */
    static final class Line extends LayoutBase<ILoggingEvent> {
        @Override
        public String doLayout(ILoggingEvent e) {
            StringBuilder b = new StringBuilder(128);
            LocalDateTime t = LocalDateTime.ofEpochSecond(Math.floorDiv(e.getTimeStamp(), 1000L),
                    (int) Math.floorMod(e.getTimeStamp(), 1000L) * 1_000_000, ZoneOffset.UTC);
            b.append(t.getYear()).append('-');
            two(b, t.getMonthValue()).append('-');
            two(b, t.getDayOfMonth()).append('T');
            two(b, t.getHour()).append(':');
            two(b, t.getMinute()).append(':');
            two(b, t.getSecond()).append('.');
            int ms = t.getNano() / 1_000_000;
            b.append(ms < 100 ? (ms < 10 ? "00" : "0") : "").append(ms).append("Z ");
            String level = e.getLevel().toString();
            b.append(level).append(" ".repeat(Math.max(0, 5 - level.length()))).append(' ');
            String logger = e.getLoggerName();
            b.append(logger, logger.lastIndexOf('.') + 1, logger.length()).append(" - ");
            b.append(e.getFormattedMessage()).append(CoreConstants.LINE_SEPARATOR);
            IThrowableProxy thrown = e.getThrowableProxy();
            if (thrown != null) {
                b.append(ThrowableProxyUtil.asString(thrown)).append(CoreConstants.LINE_SEPARATOR);
            }
            return b.toString();
        }

        private static StringBuilder two(StringBuilder b, int v) {
            return b.append(v < 10 ? "0" : "").append(v);
        }
    }
}
