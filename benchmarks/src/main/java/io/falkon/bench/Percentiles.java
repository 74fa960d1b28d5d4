package io.falkon.bench;

import org.HdrHistogram.Histogram;

import java.util.List;

/** Latency histograms in microseconds, and the percentile rows the tables and plots are made of. */
final class Percentiles {
    /** The points of a percentile curve: enough to draw the tail without one row per value. */
    static final List<Double> CURVE = List.of(0.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
            99.99, 100.0);

    private Percentiles() {
    }

    /** A histogram of microseconds up to one hour, 3 significant digits. */
    static Histogram micros() {
        return new Histogram(3_600_000_000L, 3);
    }

    static double ms(Histogram h, double percentile) {
        return percentile >= 100 ? h.getMaxValue() / 1000.0 : h.getValueAtPercentile(percentile) / 1000.0;
    }

    /** Adds one row per point of {@link #CURVE}: series, percentile, milliseconds. */
    static void curve(ResultTable table, String series, Histogram h) {
        for (double p : CURVE) {
            table.add(series, p, ms(h, p));
        }
    }

    static ResultTable curveTable(String title) {
        return new ResultTable(title, List.of("series", "percentile", "ms"));
    }
}
