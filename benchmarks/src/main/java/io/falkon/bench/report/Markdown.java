package io.falkon.bench.report;

import java.util.List;
import java.util.Map;

/** The generated section of docs/benchmarks.md. */
final class Markdown {
    private Markdown() {
    }

    static String section(List<ReportCommand.Section> sections) {
        StringBuilder md = new StringBuilder();
        md.append("## Report: every result on disk\n\n")
                .append("Rendered by `bin/falkon bench report` from the JSON in `bench-results/` (copied to\n")
                .append("[report/data/](report/data/)); the same plots with every row are in the self-contained page\n")
                .append("[report/index.html](report/index.html). Red diamonds and dashed red lines are values the\n")
                .append("papers state; everything else was measured on the machine named under each plot.\n\n");
        for (ReportCommand.Section s : sections) {
            md.append("### ").append(s.heading()).append("\n\n");
            for (int i = 0; i < s.pngs().size(); i++) {
                md.append("![").append(s.heading()).append("](report/").append(s.png(i)).append(")\n");
            }
            if (!s.pngs().isEmpty()) {
                md.append('\n');
            }
            md.append("- Reproduces: ").append(s.paper()).append(s.claim().isEmpty() ? "" : ". " + s.claim())
                    .append('\n');
            md.append("- Result: `").append(s.result().name()).append(".json`, ").append(s.result().title()).append('\n');
            md.append("- Machine: ").append(s.result().machine()).append("\n\n");
            table(md, s.result().columns(), s.result().rows(), s.shownRows());
            md.append('\n');
        }
        return md.toString();
    }

    private static void table(StringBuilder md, List<String> columns, List<Map<String, Object>> rows, int shown) {
        md.append('|');
        columns.forEach(c -> md.append(' ').append(c).append(" |"));
        md.append("\n|");
        columns.forEach(c -> md.append("---|"));
        md.append('\n');
        for (Map<String, Object> r : rows.subList(0, shown)) {
            md.append('|');
            columns.forEach(c -> md.append(' ').append(Cells.format(r.get(c)).replace("|", "\\|")).append(" |"));
            md.append('\n');
        }
        if (shown < rows.size()) {
            md.append("\n(").append(rows.size() - shown).append(" more rows in the JSON and the HTML page)\n");
        }
    }
}
