package io.falkon.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;

/** What the benchmark ran on, recorded with every result. */
final class Machine {
    private Machine() {
    }

    static void describe(ResultTable table) {
        table.meta("cores", Runtime.getRuntime().availableProcessors());
        table.meta("maxHeapMiB", Runtime.getRuntime().maxMemory() >> 20);
        table.meta("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        table.meta("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        table.meta("cpu", cpuModel());
        table.meta("date", Instant.now().toString());
    }

    static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).strip();
                }
            }
        } catch (IOException e) {
            // not Linux
        }
        return System.getProperty("os.arch");
    }
}
