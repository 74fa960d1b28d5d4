package io.falkon.executor;

/**
 * Where a Falkon program keeps its temporary files (an executor's spool, its sandboxes): where
 * {@code $TMPDIR} says, as the C executor and the tools the tasks run do, unless the JVM was told
 * otherwise. The JDK reads no environment for it: {@code java.io.tmpdir} is {@code /tmp} on Linux
 * whatever {@code $TMPDIR} says, so a site's (or a test's) scratch directory would be passed over.
 */
public final class TempDirs {
    /** The JDK's own default on Linux: a JVM given another was told where, and keeps it. */
    private static final String JDK_DEFAULT = "/tmp";

    private TempDirs() {
    }

    /** Called first in a Falkon program's main, before anything makes a temporary file. */
    public static void fromEnvironment() {
        String tmpdir = System.getenv("TMPDIR");
        if (tmpdir != null && !tmpdir.isBlank() && JDK_DEFAULT.equals(stripSlash(System.getProperty("java.io.tmpdir")))) {
            System.setProperty("java.io.tmpdir", tmpdir);
        }
    }

    private static String stripSlash(String dir) {
        return dir != null && dir.length() > 1 && dir.endsWith("/") ? dir.substring(0, dir.length() - 1) : dir;
    }
}
