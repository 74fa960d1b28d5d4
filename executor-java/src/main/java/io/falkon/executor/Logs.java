package io.falkon.executor;

/**
 * Logging of the Falkon programs. Their Logback configuration is named {@code falkon-logback.xml},
 * not {@code logback.xml}, so that a program with Falkon's jars on its class path keeps its own (two
 * {@code logback.xml} on one class path make Logback print a page of warnings); each Falkon
 * program's {@code main} asks for it by name before anything logs.
 */
public final class Logs {
    private static final String CONFIG_PROPERTY = "logback.configurationFile";

    private Logs() {
    }

    /** Uses falkon-logback.xml unless the user named a configuration. */
    public static void useFalkonConfig() {
        if (System.getProperty(CONFIG_PROPERTY) == null) {
            System.setProperty(CONFIG_PROPERTY, "falkon-logback.xml");
        }
    }
}
