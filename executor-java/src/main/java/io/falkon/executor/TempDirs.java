package io.falkon.executor;

import java.nio.file.Path;

/**
 * Where a Falkon program keeps its temporary files (an executor's spool and sandboxes): where
 * {@code $TMPDIR} says, as the C executor and the tools the tasks run do, unless the JVM was told
 * otherwise ({@code -Djava.io.tmpdir}). The JDK reads no environment for it: its temporary
 * directory is {@code /tmp} on Linux whatever {@code $TMPDIR} says, fixed when the JVM starts, so a
 * site's (or a test's) scratch directory would be passed over. Files made in the JDK's default
 * directory ({@code Files.createTempFile(prefix, suffix)}) therefore name this one explicitly.
 */
public final class TempDirs {
    /** The JDK's own default on Linux: a JVM given another was told where, and keeps it. */
    private static final String JDK_DEFAULT = "/tmp";

    private TempDirs() {
    }

    /** The directory for this program's temporary files. */
    public static Path root() {
        String jvm = System.getProperty("java.io.tmpdir");
        String env = System.getenv("TMPDIR");
        boolean jvmDefault = jvm == null || jvm.equals(JDK_DEFAULT) || jvm.equals(JDK_DEFAULT + "/");
        return Path.of(jvmDefault && env != null && !env.isBlank() ? env : jvm == null ? JDK_DEFAULT : jvm);
    }
}
