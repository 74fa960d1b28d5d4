package io.falkon.e2e.commands;

import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.executor.Executor;
import io.falkon.executor.ExecutorConfig;
import io.falkon.protocol.TaskSpec;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The dashboard in a real headless Chromium during a run: its figures follow the work while
 * tasks complete and, once the run is over, equal the status document; names peers chose are
 * shown as text, never as markup. The screenshot is kept in target/dashboard.png.
 */
class DashboardIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int TASKS = 240;

    @TempDir
    Path dir;

    private static long figure(Chromium browser, String id) throws Exception {
        JsonNode v = browser.evaluate("(document.getElementById('" + id + "') || {dataset: {}}).dataset.value || '-1'");
        return Long.parseLong(v.asText());
    }

    @Test
    void theDashboardFollowsARunAndAgreesWithTheStatusDocument() throws Exception {
        Dispatcher dispatcher = Dispatcher.start(DispatcherConfig.local().withHttp(0));
        String token = dispatcher.token().value();
        // an executor whose id a browser would take for markup if the page put it in as HTML
        Executor executor = Executor.start(ExecutorConfig.of("127.0.0.1", dispatcher.port())
                .withId("exec-<b>bold</b>").withSlots(2).withToken(token));
        try (Chromium browser = Chromium.start(Files.createDirectories(dir.resolve("profile")));
             FalkonClient client = FalkonClient.connect("127.0.0.1:" + dispatcher.port(),
                     ClientOptions.defaults().withToken(token))) {
            dispatcher.awaitExecutors(1, Duration.ofSeconds(30));
            browser.open(dispatcher.httpUrl() + "?token=" + URLEncoder.encode(token, StandardCharsets.UTF_8));
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> figure(browser, "executors-registered") == 1
                    && browser.evaluate("document.getElementById('live').textContent").asText().equals("live"));
            // from its first sample on, the time axis spans a minute, not years
            assertThat(browser.evaluate("charts['chart-tasks'].scales.x.max - charts['chart-tasks'].scales.x.min")
                    .asDouble()).isBetween(60.0, 61.0);

            Instance instance = client.createInstance("dashboard-run");
            List<CompletableFuture<TaskResult>> results = new ArrayList<>();
            for (int i = 0; i < TASKS; i++) {
                results.add(instance.submit(TaskSpec.of("/bin/sleep", "0.05")));
            }
            // while tasks complete, the page's count grows, and never runs ahead of the dispatcher's
            await().atMost(Duration.ofSeconds(30)).until(() -> figure(browser, "completed") > 0);
            long first = figure(browser, "completed");
            assertThat(first).isLessThan(TASKS);
            await().atMost(Duration.ofSeconds(30)).until(() -> figure(browser, "completed") > first);
            long busy = figure(browser, "executors-busy");
            assertThat(figure(browser, "completed")).isLessThanOrEqualTo(
                    JSON.readTree(dispatcher.status()).get("completed").asLong());
            assertThat(busy).isBetween(0L, 1L);

            CompletableFuture.allOf(results.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(20)).until(() -> figure(browser, "completed") == TASKS
                    && figure(browser, "running") == 0);
            JsonNode status = JSON.readTree(dispatcher.status());
            assertThat(figure(browser, "completed")).isEqualTo(status.get("completed").asLong());
            assertThat(figure(browser, "queued")).isEqualTo(status.get("queued").asLong()).isZero();
            assertThat(figure(browser, "failed")).isEqualTo(status.get("failed").asLong()).isZero();
            assertThat(figure(browser, "executors-registered")).isEqualTo(status.get("executors").get("registered").asLong());
            assertThat(figure(browser, "instances")).isEqualTo(status.get("instances").asLong());
            String instances = browser.evaluate("document.querySelector('#instances-table tbody').textContent").asText();
            assertThat(instances).contains("dashboard-run").contains(Integer.toString(TASKS));
            // charts were drawn (uPlot renders into canvases) with the run in them
            assertThat(browser.evaluate("document.querySelectorAll('canvas').length").asInt()).isEqualTo(5);

            assertThat(browser.evaluate("document.querySelectorAll('#executors-table b').length").asInt())
                    .as("an executor id is text, not markup").isZero();
            assertThat(browser.evaluate("document.querySelector('#executors-table tbody').textContent").asText())
                    .contains("exec-<b>bold</b>");

            byte[] png = browser.screenshot();
            assertThat(png).startsWith(0x89, 'P', 'N', 'G');
            assertThat(png.length).isGreaterThan(20_000);
            Files.write(Path.of("target", "dashboard.png"), png);
        } finally {
            executor.close();
            dispatcher.close();
        }
    }
}
