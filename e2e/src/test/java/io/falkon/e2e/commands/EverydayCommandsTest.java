package io.falkon.e2e.commands;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a newcomer trips over (issue: command-line defects), each through the real command in its
 * own process: empty files, typos, unknown commands, long failure lines, templates, and the
 * results file as a record of what ran.
 */
class EverydayCommandsTest {
    @TempDir
    Path dir;

    @Test
    void anEmptyOrCommentOnlyFileSaysSo() throws Exception {
        Path file = Files.writeString(dir.resolve("empty.txt"), "# nothing to do yet\n\n");
        Cli.Result r = Cli.run(dir, "run", file.toString());
        assertThat(r.exit()).isZero();
        assertThat(r.stderr()).contains("no tasks in " + file);
    }

    @Test
    void aMistypedOptionIsNamedWithItsLikelyMeaningAndWhereToLook() throws Exception {
        Path file = Files.writeString(dir.resolve("t.txt"), "/bin/true\n");
        Cli.Result r = Cli.run(dir, "run", "--slot", "4", file.toString());
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr()).contains("unknown option --slot").contains("--slots").contains("falkon help run")
                .doesNotContain(file.toString());
        Cli.Result unknown = Cli.run(dir, "nosuchcmd");
        assertThat(unknown.exit()).isEqualTo(2);
        assertThat(unknown.stderr()).contains("nosuchcmd").contains("see 'falkon help'");
    }

    @Test
    void aFailureLineIsBoundedHoweverLongTheTasksStderr() throws Exception {
        Path file = Files.writeString(dir.resolve("noisy.txt"), "head -c 60000 /dev/zero | tr '\\\\0' x >&2; exit 1\n");
        Cli.Result r = Cli.run(dir, "run", file.toString());
        assertThat(r.exit()).isEqualTo(1);
        String line = r.stderr().lines().filter(l -> l.startsWith("line 1:")).findFirst().orElseThrow();
        assertThat(line.length()).as("a few hundred characters, not the task's 60,000").isLessThan(1_000);
        assertThat(line).contains("more characters)");
    }

    @Test
    void aTemplateFillsEachLineKeepingTheFastPathAndQuotingWhatNeedsIt() throws Exception {
        Path args = Files.writeString(dir.resolve("args.txt"), "alpha 1\nbeta 2\nit's $HOME; rm x\n");
        Path results = dir.resolve("r.jsonl");
        Cli.Result r = Cli.run(dir, "run", "--json", "--results", results.toString(), "--template",
                "/bin/echo {#}:{1}:{2}:{}", args.toString());
        assertThat(r.exit()).as(r.stderr()).isZero();
        List<JsonNode> rows = Files.readAllLines(results).stream().map(RunCommandTest.Cli2::parse).toList();
        assertThat(rows).hasSize(3);
        assertThat(rows).extracting(n -> n.get("stdout").asText()).containsExactlyInAnyOrder(
                "1:alpha:1:alpha 1\n", "2:beta:2:beta 2\n", "3:it's:$HOME;:it's $HOME; rm x\n");
        // the results file records what each line said, to rerun it
        assertThat(rows).extracting(n -> n.get("command").asText()).contains("beta 2");
    }

    @Test
    void aTemplateWithoutAPlaceholderIsRefused() throws Exception {
        Path args = Files.writeString(dir.resolve("args.txt"), "a\n");
        Cli.Result r = Cli.run(dir, "run", "--template", "/bin/true", args.toString());
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr()).contains("uses no {}");
    }

    @Test
    void aFalkonCommandLogsInItsOwnFormatEvenWithATestLogbackXmlOnItsClassPathAndTheUsersWins() throws Exception {
        Path one = Files.writeString(dir.resolve("one.txt"), "true\n");
        // this test's class path has a logback-test.xml (another format): a falkon program ignores it
        Cli.Result r = Cli.run(dir, "run", "-v", one.toString());
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(r.stderr().lines()).anyMatch(l -> l.matches(
                "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z INFO  Dispatcher - dispatcher d-[0-9a-f]{8} .*"));
        assertThat(r.stderr()).as("nothing of SLF4J's or Logback's own").doesNotContain("SLF4J").doesNotContain("|-");
        // a configuration the user names wins
        Path theirs = Files.writeString(dir.resolve("theirs.xml"), """
                <configuration>
                  <appender name="E" class="ch.qos.logback.core.ConsoleAppender">
                    <target>System.err</target><encoder><pattern>THEIRS %level %msg%n</pattern></encoder>
                  </appender>
                  <root level="INFO"><appender-ref ref="E"/></root>
                </configuration>
                """);
        List<String> cmd = Cli.falkon(List.of("-Dlogback.configurationFile=" + theirs));
        cmd.addAll(List.of("run", "-v", one.toString()));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(out).isZero();
        assertThat(out).contains("THEIRS INFO dispatcher ");
    }

    @Test
    void noLogbackXmlShipsOnTheClassPath() throws Exception {
        // a program with Falkon's jars keeps its own logging configuration
        assertThat(ClassLoader.getSystemResources("logback.xml").hasMoreElements()).isFalse();
        // Falkon's own is set up in code, found by Logback as a service (LogConfiguratorTest)
        assertThat(ClassLoader.getSystemResource("META-INF/services/ch.qos.logback.classic.spi.Configurator"))
                .isNotNull();
    }
}
