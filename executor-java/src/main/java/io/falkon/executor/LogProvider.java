package io.falkon.executor;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator.ExecutionStatus;
import ch.qos.logback.classic.util.ContextInitializer;
import ch.qos.logback.classic.util.LogbackMDCAdapter;
import ch.qos.logback.core.joran.spi.JoranException;
import ch.qos.logback.core.status.StatusUtil;
import ch.qos.logback.core.util.StatusPrinter;
import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.helpers.Util;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * SLF4J's provider in a Falkon program ({@link LogConfigurator#forFalkonPrograms} names it): Logback,
 * set up by {@link LogConfigurator} directly. Logback's own provider does the same through its
 * general search, which checks versions and opens every jar of the class path for configurators
 * (some 20 ms of every command's start, docs/benchmarks.md "Start-up"). A configuration the user
 * named with {@code -Dlogback.configurationFile} still goes through that search, as always.
 */
public final class LogProvider implements SLF4JServiceProvider {
    private final LoggerContext context = new LoggerContext();
    private final IMarkerFactory markers = new BasicMarkerFactory();
    private final LogbackMDCAdapter mdc = new LogbackMDCAdapter();

    /** For SLF4J. */
    public LogProvider() {
    }

    @Override
    public void initialize() {
        context.setName("default");
        context.setMDCAdapter(mdc);
        LogConfigurator own = new LogConfigurator();
        own.setContext(context);
        if (own.configure(context) != ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY) {
            try {
                new ContextInitializer(context).autoConfig();
            } catch (JoranException e) {
                Util.report("Failed to configure Logback", e);
            }
            if (!StatusUtil.contextHasStatusListener(context)) {
                StatusPrinter.printInCaseOfErrorsOrWarnings(context);
            }
        }
        context.start();
    }

    @Override
    public ILoggerFactory getLoggerFactory() {
        return context;
    }

    @Override
    public IMarkerFactory getMarkerFactory() {
        return markers;
    }

    @Override
    public MDCAdapter getMDCAdapter() {
        return mdc;
    }

    @Override
    public String getRequestedApiVersion() {
        return "2.0.99";
    }
}
