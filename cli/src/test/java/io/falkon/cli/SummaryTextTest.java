package io.falkon.cli;

import org.junit.jupiter.api.Test;

import java.util.Locale;

import static org.assertj.core.api.Assertions.assertThat;

/** The run's closing line, built without java.util.Formatter, reads as the format it replaced. */
class SummaryTextTest {

    @Test
    void fixedRoundsAsPercentFDoesInEnglish() {
        double[] values = {0, 0.0004, 0.0005, 0.04, 0.05, 0.122, 0.9996, 1.9995, 2.5, 49.05, 123.45, 96_321.987_6,
                1e9 + 0.25, -0.04, -1.25, -0.0004, -0.0};
        for (double v : values) {
            for (int places : new int[] {0, 1, 3}) {
                assertThat(Workload.Summary.fixed(v, places)).as("%s to %d places", v, places)
                        .isEqualTo(String.format(Locale.ROOT, "%." + places + "f", v));
            }
        }
        assertThat(Workload.Summary.fixed(Double.NaN, 1)).isEqualTo(String.format("%.1f", Double.NaN));
    }

    @Test
    void theLineSaysWhatHappened() {
        Workload.Summary s = new Workload.Summary(6, 5, 1, 0, 0, 0.1224, 0.31, null, false, null, 0, null);
        assertThat(s.text()).isEqualTo("6 tasks: 5 succeeded, 1 failed in 0.122 s (49.0 tasks/s; 0.3 s of start-up "
                + "before)");
        Workload.Summary all = new Workload.Summary(10, 4, 2, 3, 1, 2.0, 0.05, null, false, "soon,fail=1", 2, null);
        assertThat(all.text()).isEqualTo("10 tasks: 4 succeeded, 2 failed (2 not run: a task they need failed), "
                + "3 cancelled, 1 LOST (no result) in 2.000 s (3.0 tasks/s; 0.1 s of start-up before); halted early "
                + "(--halt soon,fail=1)");
        Workload.Summary stopped = new Workload.Summary(3, 0, 0, 3, 0, 1.0, 0.2, null, false, null, 0,
                "local executor 0 exited unexpectedly with status 137 (killed by signal 9)");
        assertThat(stopped.text()).endsWith("; stopped early: local executor 0 exited unexpectedly with status 137 "
                + "(killed by signal 9)");
        assertThat(stopped.json()).contains("\"stopped\":\"local executor 0 exited unexpectedly");
    }
}
