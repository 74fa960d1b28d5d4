package io.falkon.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import java.lang.management.ManagementFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.offset;

/** {@link ProcessAge}: the start-up figure of a run's summary. */
class ProcessAgeTest {

    @Test
    void aCommandCountsFromWhenItsLauncherStartedNotFromItsProcesssFork() {
        assertThat(ProcessAge.sinceLaunch("1247.00", "1250.25 2400.00\n")).isCloseTo(3.25, offset(1e-9));
        assertThat(ProcessAge.sinceLaunch("1251.00", "1250.25 2400.00\n")).as("never negative").isZero();
    }

    @Test
    void theStartIsField22CountedFromTheEndOfTheCommandsName() {
        // a name with a space and a parenthesis, as a process may be called
        String stat = "4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 2 0 0 20 0 3 0 123450 "
                + "3133440 389 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
        assertThat(ProcessAge.fromProc(stat, "1250.25 2400.00\n")).isCloseTo(15.75, offset(1e-9));
        assertThat(ProcessAge.fromProc(stat, "1234.50 2400.00\n")).as("never negative").isZero();
        assertThatThrownBy(() -> ProcessAge.fromProc("garbage", "1.0 2.0")).isInstanceOf(RuntimeException.class);
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void thisProcessIsAtLeastAsOldAsItsJvm() {
        double jvm = (System.currentTimeMillis() - ManagementFactory.getRuntimeMXBean().getStartTime()) / 1000.0;
        double process = ProcessAge.seconds();
        // the process started before its JVM did (and the kernel counts in 10 ms ticks)
        assertThat(process).isGreaterThanOrEqualTo(jvm - 0.02);
        // a wrong field would be off by the machine's uptime, or read 0
        assertThat(process).isLessThan(jvm + 60);
    }
}
