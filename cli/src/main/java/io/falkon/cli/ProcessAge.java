package io.falkon.cli;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * How long this command has been running: the "s of start-up before" of a run's summary. On Linux
 * it counts from when bin/falkon started ({@code FALKON_LAUNCHED_UPTIME}, the system's uptime the
 * launcher read then), else from the process's start as the kernel counts it ({@code /proc}, to its
 * clock tick, 10 ms; a process that a shell exec'd into keeps the shell's start, seconds earlier
 * after {@code sh -c "sleep 3 && falkon run ..."}); elsewhere it is the time since the JVM started,
 * through JMX, whose platform beans a short run would otherwise set up for this number alone (3% of
 * its main thread; docs/benchmarks.md, "Start-up").
 */
final class ProcessAge {
    /** The unit of /proc's times: USER_HZ, 100 on every architecture a JDK runs on Linux. */
    private static final double TICKS_PER_SECOND = 100.0;

    private ProcessAge() {
    }

    static double seconds() {
        try {
            String uptime = Files.readString(Path.of("/proc/uptime"));
            String launched = System.getenv("FALKON_LAUNCHED_UPTIME");
            if (launched != null && !launched.isEmpty()) {
                return sinceLaunch(launched, uptime);
            }
            return fromProc(Files.readString(Path.of("/proc/self/stat")), uptime);
        } catch (IOException | RuntimeException e) {
            return Math.max(0, (System.currentTimeMillis() - ManagementFactory.getRuntimeMXBean().getStartTime())
                    / 1000.0);
        }
    }

    /** From the uptime the launcher read and the system's {@code uptime} now (seconds since boot). */
    static double sinceLaunch(String launched, String uptime) {
        double up = Double.parseDouble(uptime.substring(0, uptime.indexOf(' ')));
        return Math.max(0, up - Double.parseDouble(launched.trim()));
    }

    /**
     * From the process's {@code stat} line (its start, field 22, in ticks since boot) and the
     * system's {@code uptime} (seconds since boot).
     *
     * @throws RuntimeException if either is not what Linux writes
     */
    static double fromProc(String stat, String uptime) {
        // the command's name (field 2, in parentheses) may hold spaces and parentheses: count from its end
        String[] after = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        long startTicks = Long.parseLong(after[22 - 3]);
        double up = Double.parseDouble(uptime.substring(0, uptime.indexOf(' ')));
        return Math.max(0, up - startTicks / TICKS_PER_SECOND);
    }
}
