package io.falkon.bench.report;

import java.util.List;
import java.util.Map;

/** The self-contained report page: plots inlined as data URIs, no scripts, no external files. */
final class Html {
    private static final String STYLE = """
            body{font-family:system-ui,sans-serif;max-width:1400px;margin:2em auto;padding:0 1em;color:#222}
            section{border-top:1px solid #ccc;padding-top:1em;margin-top:2em}
            .fig{display:flex;flex-wrap:wrap;gap:1.5em;align-items:flex-start}
            .plots img{max-width:760px;width:100%;display:block;margin-bottom:.5em}
            .paper{flex:1;min-width:280px;background:#fbf3f3;border-left:4px solid #b03030;padding:.5em 1em}
            .machine{color:#555;font-size:.9em}
            table{border-collapse:collapse;font-size:.85em;margin-top:1em}
            td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}
            th{background:#f3f3f3}
            details{margin-top:.5em}
            """;

    private Html() {
    }

    static String page(List<ReportCommand.Section> sections) {
        StringBuilder h = new StringBuilder("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
                .append("<title>Falkon benchmark report</title><style>").append(STYLE).append("</style></head><body>\n")
                .append("<h1>Falkon benchmark report</h1>\n<p>Every result on disk, rendered by ")
                .append("<code>falkon bench report</code>. Each plot stands beside the paper's figure it reproduces; ")
                .append("red diamonds and dashed red lines are values the papers state. The same quantities (queue, ")
                .append("throughput, executors, allocations, cache hits) are drawn live during any run by the ")
                .append("dispatcher's dashboard: <a href=\"../monitoring.md\">monitoring.md</a> (<code>--http-port</code>), ")
                .append("with a <a href=\"../images/dashboard.png\">screenshot</a>.</p>\n<ul>");
        for (ReportCommand.Section s : sections) {
            h.append("<li><a href=\"#").append(esc(s.result().name())).append("\">").append(esc(s.heading()))
                    .append("</a></li>");
        }
        h.append("</ul>\n");
        for (ReportCommand.Section s : sections) {
            h.append("<section id=\"").append(esc(s.result().name())).append("\"><h2>").append(esc(s.heading()))
                    .append("</h2>\n<div class=\"fig\"><div class=\"plots\">");
            for (int i = 0; i < s.pngs().size(); i++) {
                h.append("<img alt=\"").append(esc(s.heading())).append("\" src=\"data:image/png;base64,")
                        .append(s.base64(i)).append("\">");
            }
            h.append("</div><div class=\"paper\"><h3>The paper</h3><p><b>").append(esc(s.paper())).append("</b></p><p>")
                    .append(esc(s.claim())).append("</p><h3>This run</h3><p>").append(esc(s.result().title()))
                    .append("</p><p class=\"machine\">").append(esc(s.result().machine())).append("</p></div></div>\n");
            List<Map<String, Object>> rows = s.result().rows();
            boolean fold = rows.size() > 30;
            if (fold) {
                h.append("<details><summary>").append(rows.size()).append(" rows</summary>");
            }
            table(h, s.result().columns(), rows);
            if (fold) {
                h.append("</details>");
            }
            h.append("</section>\n");
        }
        return h.append("</body></html>\n").toString();
    }

    private static void table(StringBuilder h, List<String> columns, List<Map<String, Object>> rows) {
        h.append("<table><tr>");
        columns.forEach(c -> h.append("<th>").append(esc(c)).append("</th>"));
        h.append("</tr>\n");
        for (Map<String, Object> r : rows) {
            h.append("<tr>");
            columns.forEach(c -> h.append("<td>").append(esc(Cells.format(r.get(c)))).append("</td>"));
            h.append("</tr>\n");
        }
        h.append("</table>\n");
    }

    static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
