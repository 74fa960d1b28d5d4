package io.falkon.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.channels.spi.SelectorProvider;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link Falkon#skipClassPathScans}: the two lookups that would open every jar of the class path
 * are told not to search, and a value the user gave wins (docs/benchmarks.md, "Start-up").
 */
class ClassPathScansTest {
    private static final String CLOSURES = "picocli.disable.closures";
    private static final String PROVIDER = "java.nio.channels.spi.SelectorProvider";
    private Properties saved;

    @BeforeEach
    void save() {
        saved = (Properties) System.getProperties().clone();
        System.clearProperty(CLOSURES);
        System.clearProperty(PROVIDER);
    }

    @AfterEach
    void restore() {
        System.setProperties(saved);
    }

    @Test
    void bothLookupsAreSkipped() {
        Falkon.skipClassPathScans();
        assertEquals("true", System.getProperty(CLOSURES));
        if (System.getProperty("os.name").equals("Linux")) {
            // the name given is the provider the JDK would have chosen by itself
            assertEquals(SelectorProvider.provider().getClass().getName(), System.getProperty(PROVIDER));
        }
    }

    @Test
    void theUsersValuesWin() {
        System.setProperty(CLOSURES, "false");
        System.setProperty(PROVIDER, "com.example.Provider");
        Falkon.skipClassPathScans();
        assertEquals("false", System.getProperty(CLOSURES));
        assertEquals("com.example.Provider", System.getProperty(PROVIDER));
    }
}
