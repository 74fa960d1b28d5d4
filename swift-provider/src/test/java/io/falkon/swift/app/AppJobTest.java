package io.falkon.swift.app;

import io.falkon.protocol.TaskSpec;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AppJobTest {
    @Test
    void aJobBecomesTheProgramWithItsArgumentsNoShellInBetween() {
        TaskSpec t = new AppJob("/bin/bash", List.of("_swiftwrap", "job-1", "-e", "echo", "-a", "a b"), "/run/dir",
                Map.of("K", "v"), Duration.ofSeconds(90)).task();
        assertThat(t.argv()).containsExactly("/bin/bash", "_swiftwrap", "job-1", "-e", "echo", "-a", "a b");
        assertThat(t.workDir()).isEqualTo("/run/dir");
        assertThat(t.env()).containsEntry("K", "v");
        assertThat(t.wallTime()).isEqualTo(Duration.ofSeconds(90));
    }

    @Test
    void noDirectoryAndNoWallTimeAreLeftToTheExecutor() {
        TaskSpec t = new AppJob("/bin/true", List.of(), null, Map.of(), null).task();
        assertThat(t.workDir()).isEmpty();
        assertThat(t.wallTimeMillis()).isZero();
    }

    @Test
    void aJobWithoutAProgramIsRefused() {
        assertThatThrownBy(() -> new AppJob(" ", List.of(), null, Map.of(), null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no executable");
    }

    @Test
    void wallTimesAreReadAsTheCogKitWritesThem() {
        assertThat(WallTime.parse("5")).isEqualTo(Duration.ofMinutes(5));
        assertThat(WallTime.parse("01:30")).isEqualTo(Duration.ofMinutes(90));
        assertThat(WallTime.parse("00:00:02")).isEqualTo(Duration.ofSeconds(2));
        assertThat(WallTime.parse("1:00:00:10")).isEqualTo(Duration.ofDays(1).plusSeconds(10));
        for (String bad : new String[] {"", "abc", "1:2:3:4:5", "-1", "00:00:00", "1.5"}) {
            assertThatThrownBy(() -> WallTime.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("maxwalltime '" + bad + "'");
        }
    }
}
