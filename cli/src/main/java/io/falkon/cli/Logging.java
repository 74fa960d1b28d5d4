package io.falkon.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Sets the log level per command: services log at INFO, one-shot commands only warnings. */
final class Logging {
    private Logging() {
    }

    static void level(String level) {
        if (System.getProperty("falkon.log.level") != null) {
            return; // an explicit -Dfalkon.log.level wins
        }
        if (LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx) {
            ctx.getLogger(Logger.ROOT_LOGGER_NAME).setLevel(Level.toLevel(level, Level.INFO));
        }
    }
}
