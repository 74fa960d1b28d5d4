package io.falkon.cli;

import java.lang.management.ManagementFactory;

/**
 * Where a short command's time goes, from the JVM's start to its exit: with FALKON_TRACE_STARTUP set,
 * each phase's end is printed to stderr as milliseconds since the JVM started (docs/benchmarks.md,
 * "Start-up"). Unset, a mark costs one field read.
 */
final class StartupTrace {
    private static final boolean ON = System.getenv("FALKON_TRACE_STARTUP") != null;

    private StartupTrace() {
    }

    static void mark(String phase) {
        if (ON) {
            long jvmStart = ManagementFactory.getRuntimeMXBean().getStartTime();
            System.err.printf("falkon: %5d ms  %s%n", System.currentTimeMillis() - jvmStart, phase);
        }
    }
}
