package io.falkon.executor.run;

import io.falkon.protocol.auth.TokenSource;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class TaskEnvironmentTest {
    @Test
    void theTokenStaysWithTheExecutorAndEverythingElseGoesToTheTask() {
        Map<String, String> executor = Map.of(TokenSource.ENV, "secret", TokenSource.ENV_FILE, "/home/u/.falkon/token",
                "PATH", "/usr/bin:/bin", "HOME", "/home/u");
        assertThat(TaskEnvironment.base(executor)).isEqualTo(Map.of(TokenSource.ENV_FILE, "/home/u/.falkon/token",
                "PATH", "/usr/bin:/bin", "HOME", "/home/u"));
        Map<String, String> processBuilders = new HashMap<>(executor);
        TaskEnvironment.removeExecutorsOwn(processBuilders);
        assertThat(processBuilders).doesNotContainKey(TokenSource.ENV).hasSize(3);
    }
}
