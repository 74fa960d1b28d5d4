package io.falkon.bench.report;

import io.falkon.bench.ResultTable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import java.io.PrintWriter;
import java.io.StringWriter;

class ReportCommandTest {
    @TempDir
    Path dir;

    private Path results() throws Exception {
        Path results = dir.resolve("results");
        ResultTable bundling = new ResultTable("bundling test", List.of("transport", "bundle", "tasks", "seconds",
                "tasksPerSecond", "msPerTask", "submitCallsPerSecond"));
        bundling.meta("cpu", "Test CPU");
        bundling.meta("cores", 2);
        bundling.add("tcp", 1, 100, 1.0, 100.0, 10.0, 100.0);
        bundling.add("tcp", 100, 1000, 1.0, 1000.0, 1.0, 10.0);
        bundling.add("ws", 1, 100, 2.0, 50.0, 20.0, 50.0);
        bundling.write(results, "bundling");
        ResultTable latency = new ResultTable("latency test", List.of("mode", "executor", "tasks", "meanMs", "p50ms",
                "p90ms", "p99ms", "p999ms", "maxMs"));
        latency.add("no-exec", "emulated", 10, 0.5, 0.4, 0.6, 0.9, 1.0, 1.2);
        latency.write(results, "latency");
        ResultTable curve = new ResultTable("curve", List.of("series", "percentile", "ms"));
        curve.add("no-exec emulated", 50.0, 0.4);
        curve.add("no-exec emulated", 99.0, 0.9);
        curve.add("no-exec emulated", 100.0, 1.2);
        curve.write(results, "latency-percentiles");
        ResultTable other = new ResultTable("something without a figure", List.of("name", "value"));
        other.add("x", 1);
        other.write(results, "zzz-unknown");
        return results;
    }

    private int report(Path results, Path docs) {
        return new CommandLine(new ReportCommand()).execute("--results", results.toString(), "--docs", docs.toString());
    }

    @Test
    void rendersPlotsBesideThePapersFiguresIntoAPageAndTheMarkdown() throws Exception {
        Path docs = dir.resolve("docs");
        Files.createDirectories(docs);
        Files.writeString(docs.resolve("benchmarks.md"), "# Benchmarks\n\nHand-written prose stays.\n");
        assertThat(report(results(), docs)).isZero();

        // the plots are real PNGs of the stated size; bundling has two (tasks/s and cost per task)
        for (String png : List.of("bundling.png", "bundling-2.png", "latency.png")) {
            BufferedImage img = ImageIO.read(docs.resolve("report").resolve(png).toFile());
            assertThat(img).as(png).isNotNull();
            assertThat(img.getWidth()).isEqualTo(Charts.WIDTH);
            assertThat(img.getHeight()).isEqualTo(Charts.HEIGHT);
        }
        assertThat(docs.resolve("report/zzz-unknown.png")).doesNotExist();
        // the inputs travel with the report
        assertThat(docs.resolve("report/data/latency-percentiles.json")).exists();

        String html = Files.readString(docs.resolve("report/index.html"));
        assertThat(html).contains("SC07 Fig. 5").contains("Test CPU, 2 cores").contains("something without a figure");
        assertThat(html).doesNotContain("src=\"http").doesNotContain("<script");
        Matcher m = Pattern.compile("src=\"data:image/png;base64,([A-Za-z0-9+/=]+)\"").matcher(html);
        int inlined = 0;
        while (m.find()) {
            assertThat(ImageIO.read(new ByteArrayInputStream(Base64.getDecoder().decode(m.group(1))))).isNotNull();
            inlined++;
        }
        assertThat(inlined).isEqualTo(3);
        // sections follow the papers' order, figureless results last
        assertThat(html.indexOf("id=\"bundling\"")).isLessThan(html.indexOf("id=\"latency\""));
        assertThat(html.indexOf("id=\"latency\"")).isLessThan(html.indexOf("id=\"zzz-unknown\""));

        String md = Files.readString(docs.resolve("benchmarks.md"));
        assertThat(md).startsWith("# Benchmarks\n\nHand-written prose stays.\n");
        assertThat(md).contains(ReportCommand.BEGIN).contains(ReportCommand.END)
                .contains("![Bundling: client bundle size sweep](report/bundling.png)")
                .contains("| tcp | 100 | 1,000 | 1.000 | 1,000 | 1.000 | 10.000 |");
        // rendering again replaces the section instead of appending another
        assertThat(report(dir.resolve("results"), docs)).isZero();
        assertThat(Files.readString(docs.resolve("benchmarks.md"))).isEqualTo(md);
    }

    @Test
    void namesTheFileThatIsNotAResult() throws Exception {
        Path results = results();
        Files.writeString(results.resolve("broken.json"), "{\"not\": \"a result\"}");
        Path docs = dir.resolve("docs");
        StringWriter err = new StringWriter();
        int rc = new CommandLine(new ReportCommand()).setErr(new PrintWriter(err))
                .execute("--results", results.toString(), "--docs", docs.toString());
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString()).contains("broken.json").contains("not a benchmark result");
    }

    @Test
    void anEmptyResultsDirectoryIsAnErrorNotAnEmptyReport() {
        assertThat(report(dir.resolve("nothing"), dir.resolve("docs"))).isEqualTo(2);
        assertThat(dir.resolve("docs/benchmarks.md")).doesNotExist();
    }

    @Test
    void percentilesAreDrawnInNinesAndSamplesAveraged() {
        assertThat(Figures.nines(90)).isCloseTo(1, within(1e-9));
        assertThat(Figures.nines(99.9)).isCloseTo(3, within(1e-9));
        assertThat(Figures.nines(100)).isEqualTo(5);
        assertThat(Figures.movingAverage(List.of(2.0, 4.0, 6.0, 8.0), 2)).containsExactly(2.0, 3.0, 5.0, 7.0);
    }
}
