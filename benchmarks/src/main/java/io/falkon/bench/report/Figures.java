package io.falkon.bench.report;

import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.internal.chartpart.Chart;

import java.awt.Color;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

import static io.falkon.bench.report.Result.num;
import static io.falkon.bench.report.Result.str;
import java.util.Locale;

/**
 * Which paper figure each benchmark reproduces, what the paper reports there, and how to plot our
 * result beside it. The paper's values are only those its text states (the seeds have no data
 * tables); they are drawn as red diamonds or dashed red lines.
 */
final class Figures {

    /**
     * @param result     the benchmark's main result file (without .json)
     * @param companions further result files the plots read (percentile curves, samples)
     * @param paper      the figure or table reproduced
     * @param claim      what the paper reports there, in its numbers
     * @param plot       charts from the results on disk (keyed by file name)
     */
    record Figure(String result, List<String> companions, String heading, String paper, String claim,
                  Function<Map<String, Result>, List<Chart<?, ?>>> plot) {
    }

    private static final String SC07 = "Falkon SC07";
    private static final String DD = "data-diffusion report";

    private Figures() {
    }

    static List<Figure> all() {
        return List.of(
                new Figure("throughput-executors", List.of(), "Throughput vs executor count",
                        SC07 + " Fig. 3 (throughput as a function of executor count)",
                        "Throughput grows with executors to 487 tasks/s at 256 executors over GT4 WS; one executor "
                                + "alone handled 28 tasks/s.",
                        r -> throughput(r.get("throughput-executors"))),
                new Figure("throughput", List.of(), "Throughput: sleep 0 end to end",
                        SC07 + " Fig. 3 (throughput vs executor count) and §4.1; " + DD + " Fig. 4",
                        "487 tasks/s with 256 executors over GT4 WS, 28 tasks/s for one executor; later 604 (Java "
                                + "executor, TCP) and 2,534 tasks/s (C executor, TCP) on 200 CPUs.",
                        r -> throughput(r.get("throughput"))),
                new Figure("bundling", List.of(), "Bundling: client bundle size sweep",
                        SC07 + " Fig. 5 (bundling throughput and cost per task)",
                        "~20 tasks/s without bundling, rising to a peak of almost 1,500 tasks/s at ~300 tasks per "
                                + "bundle, then falling (Axis array copying).",
                        Figures::bundling),
                new Figure("efficiency", List.of(), "Efficiency vs task length and executors",
                        SC07 + " Figs. 6 and 7 (efficiency for task lengths and executor counts)",
                        "95% with 1 s tasks on 256 executors (the worst case), 99% with 8 s tasks; PBS and Condor "
                                + "under 1% for 1 s tasks.",
                        Figures::efficiency),
                new Figure("queue", List.of(), "Queue: memory per queued task",
                        SC07 + " Fig. 8 and §4.5 (2M queued tasks)",
                        "2,000,000 queued tasks in a 1.5 GB heap (at most 805 bytes per task); 298 tasks/s "
                                + "average with 64 executors.",
                        Figures::queue),
                new Figure("scale", List.of("scale-overhead"), "Scale: thousands of executors on one dispatcher",
                        SC07 + " Figs. 9 and 10 (54,000 executors; task overhead)",
                        "54,000 emulated executors (900 per machine); most per-task overheads below 200 ms, the "
                                + "maximum 1,300 ms; all registered and busy after 408 s.",
                        Figures::scale),
                new Figure("latency", List.of("latency-percentiles"), "Latency: one task at a time",
                        SC07 + " §4.1 (single executor)",
                        "No latency figure; one executor handled 28 tasks/s, i.e. ~36 ms per task round trip.",
                        Figures::latency),
                new Figure("endurance", List.of("endurance-samples"), "Endurance: a long no-exec run",
                        DD + " Fig. 7 (endurance test, 1 billion tasks)",
                        "1B sleep-0 tasks in 19.2 h on 128 CPUs with 4 dispatchers and bundles of 100: 17K+ "
                                + "falling to 15K+ tasks/s (a client leak), average 15.6K tasks/s.",
                        Figures::endurance),
                new Figure("ws", List.of(), "The Web Services interface",
                        SC07 + " Figs. 3 and 5 (GT4 WS calls, bundling over WS)",
                        "GT4 without security: 500 WS calls/s; bundling over WS peaked near 1,500 tasks/s.",
                        Figures::ws),
                new Figure("provisioning", List.of(), "Dynamic provisioning: the 18-stage workload",
                        SC07 + " Table 4 (Falkon-15 ... Falkon-inf, 32 machines)",
                        "Time to complete 1,754 / 1,680 / 1,507 / 1,484 / 1,276 s for Falkon-15/60/120/180/inf "
                                + "(ideal 1,260 s).",
                        Figures::provisioning),
                new Figure("scheduler", List.of(), "Data-aware scheduler decisions/s",
                        DD + " Fig. 8 (scheduler performance per policy)",
                        "From 2,981 decisions/s (FA, no I/O) down to 1,322/s (MCH), 32 nodes, 250K tasks.",
                        Figures::scheduler),
                new Figure("mi", List.of(), "Monotonically increasing workload (MI)",
                        DD + " Figs. 9 and 10 (MI throughput and response time)",
                        "Average throughput FA 4 Gb/s vs 5.3-13.9 Gb/s with data diffusion (ideal 14.1); "
                                + "peak 81 Gb/s vs 6 Gb/s.",
                        r -> List.of(policyBars(r.get("mi"), "MI: efficiency per policy and cache size"))),
                new Figure("allpairs", List.of(), "All-Pairs (AP)",
                        DD + " Fig. 11 (AP efficiency vs active storage)",
                        "Data diffusion 80% of ideal for 500x500 with 1 s compute, 75% with 0.1 s; the shared "
                                + "file system alone 26%.",
                        Figures::allPairs),
                new Figure("peers", List.of(), "Falkon beside today's peers",
                        SC07 + " Table 2 (Falkon, Condor, PBS, BOINC throughput)",
                        "Falkon 487 tasks/s; Condor 0.49-11 (Condor-J2 22); PBS 0.45; BOINC 93 tasks/s.",
                        Figures::peers),
                new Figure("table2", List.of(), "Today's Table 2: batch schedulers, and Falkon on their nodes",
                        SC07 + " Table 2 (Falkon, Condor, PBS, BOINC throughput)",
                        "PBS 0.45 tasks/s, Condor 0.49-11 (Condor-J2 22), BOINC 93, Falkon 487.",
                        Figures::table2),
                new Figure("snakemake", List.of(), "Snakemake workflows: local, Falkon, Slurm",
                        "no figure in the papers (issue 55)",
                        "Snakemake's Slurm executor submits one sbatch per job, as the papers' Swift did through GRAM.",
                        Figures::snakemake),
                new Figure("applications", List.of(), "Applications side by side: Montage, stacking, BLAST",
                        "seed 004 §VI-B (Montage and BLAST through Swift on Falkon); " + DD + " §4.4.6 (stacking)",
                        "The seeds measure these applications against GPFS-bound runs and mpiBLAST, not against "
                                + "these frameworks: no values of theirs to draw.",
                        Figures::applications),
                new Figure("journal", List.of(), "The journal's price", "no figure in the papers",
                        "Falkon 2007 had no persistent queue.", Figures::journal),
                new Figure("chaos", List.of(), "Chaos: executors killed mid-run", "no figure in the papers",
                        "The papers report retries but no fault-injection runs.", Figures::chaos));
    }

    private static List<Double> col(List<Map<String, Object>> rows, String column) {
        return rows.stream().map(r -> num(r, column)).toList();
    }

    private static String label(Map<String, Object> r, List<String> columns) {
        return columns.stream().map(c -> c + " " + str(r, c)).collect(Collectors.joining(", "));
    }

    private static List<Chart<?, ?>> throughput(Result t) {
        List<Map<String, Object>> rows = t.rows(r -> !str(r, "mode").equals("c-spawn-loop"));
        Set<String> counts = rows.stream().map(r -> str(r, "executors")).collect(Collectors.toSet());
        String x = counts.size() > 1 ? "executors" : "bundle";
        List<String> key = new ArrayList<>(List.of("mode", "executor", "executors", "slots", "prefetch", "bundle"));
        key.remove(x);
        XYChart c = Charts.xy("Tasks/s end to end vs " + x, x.equals("bundle") ? "client bundle size" : "executors",
                "tasks/s", true, true);
        Result.group(rows, r -> label(r, key)).forEach((name, g) -> Charts.line(c, name, col(g, x), col(g, "tasksPerSecond")));
        double x0 = rows.stream().mapToDouble(r -> num(r, x)).min().orElse(1);
        double x1 = Math.max(x0 * 2, rows.stream().mapToDouble(r -> num(r, x)).max().orElse(100));
        t.rows(r -> str(r, "mode").equals("c-spawn-loop"))
                .forEach(r -> Charts.limitLine(c, "C posix_spawn loop (this machine)", x0, x1, num(r, "tasksPerSecond")));
        if (x.equals("executors")) {
            Charts.paperPoints(c, "SC07 Fig. 3: GT4 WS, 2007", List.of(1.0, 256.0), List.of(28.0, 487.0));
        } else {
            Charts.paperLine(c, "SC07 Fig. 3: 487 tasks/s (WS, 256 executors)", x0, x1, 487);
            Charts.paperLine(c, "DD Fig. 4: 2,534 tasks/s (C executor, TCP)", x0, x1, 2534);
        }
        return List.of(c);
    }

    private static List<Chart<?, ?>> bundling(Map<String, Result> all) {
        List<Map<String, Object>> rows = all.get("bundling").rows();
        XYChart c = Charts.xy("Tasks/s vs client bundle size (no-exec executors)", "tasks per bundle", "tasks/s",
                true, true);
        Result.group(rows, r -> str(r, "transport").toUpperCase(Locale.ROOT) + " (this machine)")
                .forEach((name, g) -> Charts.line(c, name, col(g, "bundle"), col(g, "tasksPerSecond")));
        Charts.paperPoints(c, "SC07 Fig. 5: GT4 WS, 2007", List.of(1.0, 300.0), List.of(20.0, 1500.0));
        XYChart cost = Charts.xy("Cost per task vs client bundle size", "tasks per bundle", "ms per task", true, true);
        Result.group(rows, r -> str(r, "transport").toUpperCase(Locale.ROOT) + " (this machine)")
                .forEach((name, g) -> Charts.line(cost, name, col(g, "bundle"), col(g, "msPerTask")));
        Charts.paperPoints(cost, "SC07 Fig. 5: GT4 WS, 2007", List.of(1.0, 300.0), List.of(50.0, 1000 / 1500.0));
        return List.of(c, cost);
    }

    private static List<Chart<?, ?>> efficiency(Map<String, Result> all) {
        List<Map<String, Object>> rows = all.get("efficiency").rows();
        XYChart c = Charts.xy("Efficiency vs task length (sleep tasks, 1 slot per executor)", "task length (s)",
                "efficiency (%)", true, false);
        Result.group(rows, r -> str(r, "executors") + " executors").forEach((name, g) -> Charts.line(c, name,
                col(g, "taskSeconds"), g.stream().map(r -> 100 * num(r, "efficiency")).toList()));
        Charts.paperPoints(c, "SC07 Figs. 6-7: 256 executors 1 s; 8 s", List.of(1.0, 8.0), List.of(95.0, 99.0));
        c.getStyler().setYAxisMin(0.0);
        c.getStyler().setYAxisMax(105.0);
        return List.of(c);
    }

    private static List<Chart<?, ?>> queue(Map<String, Result> all) {
        List<Map<String, Object>> rows = all.get("queue").rows();
        CategoryChart c = Charts.bars("Live heap per queued task", "", "bytes per queued task");
        List<String> names = new ArrayList<>();
        List<Double> values = new ArrayList<>();
        for (Map<String, Object> r : rows) {
            names.add(String.format("this machine: %,d tasks, -Xmx%s", (long) num(r, "tasks"), str(r, "heap")));
            values.add(num(r, "liveBytesPerQueuedTask"));
        }
        names.add("SC07 §4.5: 2M tasks in 1.5 GB (upper bound)");
        values.add(1.5 * (1L << 30) / 2e6);
        c.addSeries("bytes per queued task", names, values);
        c.getStyler().setLegendVisible(false);
        return List.of(c);
    }

    /** Percentile curves on a "nines" axis: 1 = p90, 2 = p99, 3 = p99.9, 4 = p99.99, max at 5. */
    private static XYChart percentiles(Result curves, String title) {
        XYChart c = Charts.xy(title, "percentile, in nines (1 = p90, 2 = p99, 3 = p99.9; max drawn at 5)", "ms",
                false, true);
        Result.group(curves.rows(), r -> str(r, "series")).forEach((name, g) -> Charts.line(c, name,
                g.stream().map(r -> nines(num(r, "percentile"))).toList(),
                g.stream().map(r -> Math.max(0.001, num(r, "ms"))).toList()));
        return c;
    }

    static double nines(double percentile) {
        return percentile >= 100 ? 5 : Math.min(5, -Math.log10(1 - percentile / 100));
    }

    private static List<Chart<?, ?>> scale(Map<String, Result> all) {
        Result curves = all.get("scale-overhead");
        if (curves == null) {
            return List.of();
        }
        XYChart c = percentiles(curves, String.format("Per-task overhead with %,d executors",
                (long) num(all.get("scale").rows().get(0), "executors")));
        Charts.paperLine(c, "SC07 Fig. 10: most below 200 ms", 0, 5, 200);
        Charts.paperLine(c, "SC07 Fig. 10: maximum 1,300 ms (54K executors)", 0, 5, 1300);
        return List.of(c);
    }

    private static List<Chart<?, ?>> latency(Map<String, Result> all) {
        Result curves = all.get("latency-percentiles");
        if (curves == null) {
            return List.of();
        }
        XYChart c = percentiles(curves, "One-task round trip, client to client");
        Charts.paperLine(c, "SC07: 1 executor, 28 tasks/s = 36 ms per task", 0, 5, 1000 / 28.0);
        return List.of(c);
    }

    private static List<Chart<?, ?>> endurance(Map<String, Result> all) {
        Result samples = all.get("endurance-samples");
        if (samples == null || samples.rows().isEmpty()) {
            return List.of();
        }
        List<Map<String, Object>> rows = samples.rows();
        List<Double> xs = col(rows, "second");
        List<Double> tps = col(rows, "tasksPerSecond");
        XYChart c = Charts.xy("Throughput sampled every second", "second", "tasks/s", false, false);
        Charts.trace(c, "1-s samples (this machine)", xs, tps, new Color(0x9E, 0xC5, 0xE8));
        Charts.trace(c, "60-s moving average", xs, movingAverage(tps, 60), new Color(0x1F, 0x4E, 0x9A));
        Charts.paperLine(c, "DD Fig. 7: average 15.6K tasks/s (1B tasks)", xs.get(0), xs.get(xs.size() - 1), 15_600);
        c.getStyler().setYAxisMin(0.0);
        XYChart heap = Charts.xy("Heap in use (client, dispatcher, executors in one JVM)", "second", "MiB", false,
                false);
        Charts.trace(heap, "heap used", xs, col(rows, "heapUsedMiB"), new Color(0x2E, 0x7D, 0x32));
        Charts.trace(heap, "GC ms in that second", xs, col(rows, "gcMillis"), new Color(0xE6, 0x8A, 0x00));
        return List.of(c, heap);
    }

    static List<Double> movingAverage(List<Double> xs, int window) {
        List<Double> out = new ArrayList<>(xs.size());
        double sum = 0;
        for (int i = 0; i < xs.size(); i++) {
            sum += xs.get(i);
            if (i >= window) {
                sum -= xs.get(i - window);
            }
            out.add(sum / Math.min(i + 1, window));
        }
        return out;
    }

    private static List<Chart<?, ?>> ws(Map<String, Result> all) {
        List<Map<String, Object>> rows = all.get("ws").rows(r -> str(r, "measure").equals("end-to-end"));
        XYChart c = Charts.xy("SOAP: tasks/s vs bundle size (Submit / GetResults)", "tasks per Submit", "tasks/s",
                true, true);
        Charts.line(c, "SOAP, Axis2 2.0 (this machine)", col(rows, "bundle"), col(rows, "tasksPerSecond"));
        Charts.paperPoints(c, "SC07 Fig. 5: GT4 WS, 2007", List.of(1.0, 300.0), List.of(20.0, 1500.0));
        double x1 = Math.max(10, rows.stream().mapToDouble(r -> num(r, "bundle")).max().orElse(10));
        Charts.paperLine(c, "SC07 Fig. 3: GT4, 500 WS calls/s", 1, x1, 500);
        return List.of(c);
    }

    private static final Map<String, Double> TABLE_4 = Map.of("falkon-15", 1754.0, "falkon-60", 1680.0,
            "falkon-120", 1507.0, "falkon-180", 1484.0, "falkon-inf", 1276.0, "ideal", 1260.0);

    private static List<Chart<?, ?>> provisioning(Map<String, Result> all) {
        List<Map<String, Object>> rows = all.get("provisioning").rows(r -> TABLE_4.containsKey(str(r, "config")));
        if (rows.isEmpty()) {
            return List.of();
        }
        CategoryChart c = Charts.bars("Time to complete the 18 stages (paper seconds)", "configuration", "seconds");
        List<String> configs = rows.stream().map(r -> str(r, "config")).toList();
        c.addSeries("this machine (time-scaled)", configs, col(rows, "timeToComplete"));
        c.addSeries("SC07 Table 4", configs, configs.stream().map(TABLE_4::get).toList());
        return List.of(c);
    }

    private static List<Chart<?, ?>> scheduler(Map<String, Result> all) {
        List<Map<String, Object>> rows = all.get("scheduler").rows();
        CategoryChart c = Charts.bars("Scheduling decisions/s per policy", "", "decisions/s");
        List<String> names = new ArrayList<>(rows.stream().map(r -> str(r, "policy") + " (this machine)").toList());
        List<Double> values = new ArrayList<>(col(rows, "decisionsPerSecond"));
        // the paper states only the two ends of its range
        names.addAll(List.of("FA no I/O, DD Fig. 8", "MCH, DD Fig. 8"));
        values.addAll(List.of(2981.0, 1322.0));
        c.addSeries("decisions/s", names, values);
        c.getStyler().setLegendVisible(false);
        c.getStyler().setYAxisLogarithmic(true); // two orders of magnitude apart
        c.getStyler().setYAxisMin(100.0);
        return List.of(c);
    }

    private static CategoryChart policyBars(Result r, String title) {
        CategoryChart c = Charts.bars(title, "policy", "efficiency (%)");
        List<Map<String, Object>> rows = r.rows();
        List<String> names = rows.stream().map(x -> str(x, "policy") + (x.containsKey("cacheMiB")
                ? " " + str(x, "cacheMiB") + " MiB" : "")).toList();
        c.addSeries("this machine", names, rows.stream().map(x -> 100 * num(x, "efficiency")).toList());
        return c;
    }

    private static List<Chart<?, ?>> allPairs(Map<String, Result> all) {
        List<Map<String, Object>> rows = all.get("allpairs").rows();
        CategoryChart c = Charts.bars("All-Pairs: efficiency per policy", "", "efficiency (%)");
        List<String> names = new ArrayList<>(rows.stream().map(r -> str(r, "policy") + " (this machine)").toList());
        List<Double> values = new ArrayList<>(rows.stream().map(r -> 100 * num(r, "efficiency")).toList());
        names.addAll(List.of("data diffusion 1 s, DD Fig. 11", "data diffusion 0.1 s, DD Fig. 11"));
        values.addAll(List.of(80.0, 75.0));
        c.addSeries("efficiency", names, values);
        c.getStyler().setLegendVisible(false);
        return List.of(c);
    }

    private static List<Chart<?, ?>> peers(Map<String, Result> all) {
        List<Map<String, Object>> rows = all.get("peers").rows();
        List<Chart<?, ?>> charts = new ArrayList<>();
        for (String workload : List.of("true", "noop")) {
            List<Map<String, Object>> w = rows.stream().filter(r -> str(r, "workload").equals(workload)).toList();
            if (w.isEmpty()) {
                continue;
            }
            CategoryChart c = Charts.bars(workload.equals("true") ? "/bin/true tasks/s, same workers for every system"
                    : "No-op tasks/s (dispatch path alone)", "", "tasks/s");
            c.addSeries("tasks/s", w.stream().map(r -> str(r, "system") + (str(r, "system").equals("falkon-no-exec")
                    ? " " + str(r, "config").replaceAll(",.*", "") : "")).toList(), col(w, "tasksPerSecond"));
            c.getStyler().setLegendVisible(false);
            c.getStyler().setYAxisLogarithmic(true); // the peers are two orders of magnitude below
            c.getStyler().setYAxisMin(1.0);
            charts.add(c);
        }
        return charts;
    }

    private static List<Chart<?, ?>> table2(Map<String, Result> all) {
        List<Map<String, Object>> rows = all.get("table2").rows();
        CategoryChart c = Charts.bars("Short tasks per second, nodes included for Falkon (log scale)", "", "tasks/s");
        // short labels: the longest would be cut off under the rotated axis
        c.addSeries("tasks/s", rows.stream().map(r -> str(r, "way").replace("falkon run --provisioner ", "falkon on ")
                .replace(" (nodes included)", "")).toList(), col(rows, "tasksPerSecond"));
        c.getStyler().setLegendVisible(false);
        c.getStyler().setYAxisLogarithmic(true); // the schedulers are two orders of magnitude below
        c.getStyler().setYAxisMin(0.1);
        return List.of(c);
    }

    private static List<Chart<?, ?>> snakemake(Map<String, Result> all) {
        List<Chart<?, ?>> charts = new ArrayList<>();
        Result.group(all.get("snakemake").rows(), r -> str(r, "workflow")).forEach((workflow, rs) -> {
            CategoryChart c = Charts.bars(workflow + ": Snakemake jobs per second by way (log scale)", "", "jobs/s");
            c.addSeries("jobs/s", rs.stream().map(r -> str(r, "way") + " (" + str(r, "jobs") + " jobs)").toList(),
                    col(rs, "jobsPerSecond"));
            c.getStyler().setLegendVisible(false);
            c.getStyler().setYAxisLogarithmic(true);
            c.getStyler().setYAxisMin(0.01);
            charts.add(c);
        });
        return charts;
    }

    private static List<Chart<?, ?>> applications(Map<String, Result> all) {
        List<Map<String, Object>> rows = all.get("applications").rows();
        CategoryChart c = Charts.bars("Wall time over xargs -P 2's, per way (lower is better)", "", "x xargs -P 2");
        List<String> ways = rows.stream().map(r -> str(r, "way")).distinct().toList();
        Result.group(rows, r -> str(r, "application")).forEach((app, rs) -> {
            Map<String, Double> byWay = new java.util.HashMap<>();
            rs.forEach(r -> byWay.put(str(r, "way"), num(r, "overXargs")));
            c.addSeries(app, ways, ways.stream().map(w -> byWay.getOrDefault(w, 0.0)).toList());
        });
        return List.of(c);
    }

    private static List<Chart<?, ?>> journal(Map<String, Result> all) {
        List<Map<String, Object>> rows = all.get("journal").rows();
        CategoryChart c = Charts.bars("No-exec tasks/s by journal durability", "journal", "tasks/s");
        c.addSeries("this machine", rows.stream().map(r -> str(r, "journal")).toList(), col(rows, "tasksPerSecond"));
        return List.of(c);
    }

    private static List<Chart<?, ?>> chaos(Map<String, Result> all) {
        List<Map<String, Object>> rows = all.get("chaos").rows();
        XYChart c = Charts.xy("Per round: executors killed, tasks retried, lost, duplicated", "round", "count",
                false, false);
        for (String col : List.of("kills", "retried", "lost", "duplicated")) {
            Charts.line(c, col, col(rows, "round"), col(rows, col));
        }
        return List.of(c);
    }
}
