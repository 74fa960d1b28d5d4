package io.falkon.bench.report;

import org.knowm.xchart.internal.chartpart.Chart;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.stream.Stream;

/**
 * {@code falkon bench report}: every result on disk rendered as plots (PNG, XChart) beside the
 * paper's figure each reproduces, into a self-contained HTML page (plots inlined) and into the
 * generated section of {@code docs/benchmarks.md}. The JSON it rendered is copied beside the
 * page, so that the report can be rendered again from the repository alone.
 */
@Command(name = "report", mixinStandardHelpOptions = true,
        description = "Render every result in --results into docs/benchmarks.md and a self-contained HTML page.")
public final class ReportCommand implements Callable<Integer> {
    static final String BEGIN = "<!-- BEGIN falkon bench report: generated, edits here are overwritten -->";
    static final String END = "<!-- END falkon bench report -->";
    /** Tables longer than this are summarised in the markdown (the HTML and the JSON have them all). */
    private static final int MAX_MARKDOWN_ROWS = 30;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--results", description = "directory of result JSON files (default: ${DEFAULT-VALUE})")
    Path results = Path.of("bench-results");

    @Option(names = "--docs", description = "the docs directory: writes benchmarks.md's generated section and "
            + "report/ (index.html, PNGs, data/) (default: ${DEFAULT-VALUE})")
    Path docs = Path.of("docs");

    @Override
    public Integer call() throws IOException {
        System.setProperty("java.awt.headless", "true");
        Map<String, Result> all;
        try {
            all = readAll(results);
        } catch (IOException e) {
            spec.commandLine().getErr().println("falkon bench report: " + e.getMessage());
            return 2;
        }
        if (all.isEmpty()) {
            spec.commandLine().getErr().println("falkon bench report: no result files (*.json) in "
                    + results.toAbsolutePath()
                    + "; run some `falkon bench WORKLOAD` first");
            return 2;
        }
        Path report = docs.resolve("report");
        Path data = report.resolve("data");
        Files.createDirectories(data);
        List<Section> sections = sections(all);
        for (Section s : sections) {
            for (int i = 0; i < s.pngs.size(); i++) {
                Files.write(report.resolve(s.png(i)), s.pngs.get(i));
            }
            for (String file : s.files) {
                Path from = results.resolve(file + ".json");
                Path to = data.resolve(file + ".json");
                if (!from.toAbsolutePath().normalize().equals(to.toAbsolutePath().normalize())) {
                    Files.copy(from, to, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
        Files.writeString(report.resolve("index.html"), Html.page(sections));
        Path md = docs.resolve("benchmarks.md");
        String existing = Files.exists(md) ? Files.readString(md) : "# Benchmarks\n";
        Files.writeString(md, splice(existing, Markdown.section(sections)));
        int plots = sections.stream().mapToInt(s -> s.pngs.size()).sum();
        System.out.printf("rendered %d results (%d plots) into %s and %s%n", sections.size(), plots,
                report.resolve("index.html"), md);
        return 0;
    }

    static Map<String, Result> readAll(Path dir) throws IOException {
        Map<String, Result> all = new TreeMap<>();
        if (!Files.isDirectory(dir)) {
            return all;
        }
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.getFileName().toString().endsWith(".json")).sorted().toList()) {
                Result r = Result.read(f);
                all.put(r.name(), r);
            }
        }
        return all;
    }

    /** One per figure whose result is on disk, in the papers' order; then any other result, table only. */
    static List<Section> sections(Map<String, Result> all) {
        List<Section> out = new ArrayList<>();
        Map<String, Result> left = new LinkedHashMap<>(all);
        for (Figures.Figure f : Figures.all()) {
            Result main = all.get(f.result());
            if (main == null) {
                continue;
            }
            List<String> files = new ArrayList<>(List.of(f.result()));
            f.companions().stream().filter(all::containsKey).forEach(files::add);
            files.forEach(left::remove);
            List<byte[]> pngs = new ArrayList<>();
            try {
                for (Chart<?, ?> c : f.plot().apply(all)) {
                    pngs.add(Charts.png(c));
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (RuntimeException e) {
                // a result from an older or partial run that the plot cannot read: say so, keep the table
                System.err.println("falkon bench report: cannot plot " + f.result() + ".json (" + e.getMessage()
                        + "); its table is rendered without a plot");
                pngs.clear();
            }
            out.add(new Section(f.heading(), f.paper(), f.claim(), main, files, pngs));
        }
        left.values().forEach(r -> out.add(new Section(r.title(), "no figure", "", r, List.of(r.name()), List.of())));
        return out;
    }

    /** Replaces the generated section of the markdown, or appends one. */
    static String splice(String markdown, String section) {
        int b = markdown.indexOf(BEGIN);
        int e = markdown.indexOf(END);
        String block = BEGIN + "\n" + section + END;
        if (b >= 0 && e > b) {
            return markdown.substring(0, b) + block + markdown.substring(e + END.length());
        }
        return markdown.stripTrailing() + "\n\n" + block + "\n";
    }

    /** A figure's worth of report: heading, the paper's side, our result, its plots. */
    record Section(String heading, String paper, String claim, Result result, List<String> files, List<byte[]> pngs) {
        String png(int i) {
            return result.name() + (i == 0 ? "" : "-" + (i + 1)) + ".png";
        }

        String base64(int i) {
            return Base64.getEncoder().encodeToString(pngs.get(i));
        }

        int shownRows() {
            return Math.min(result.rows().size(), MAX_MARKDOWN_ROWS);
        }
    }
}
