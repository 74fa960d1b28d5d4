package io.falkon.bench.report;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.util.List;

/** The few chart shapes the report uses, styled alike; PNG bytes out. */
final class Charts {
    static final int WIDTH = 760;
    static final int HEIGHT = 520;
    /** The papers' figures are drawn in one colour and shape everywhere, so they read as "the paper". */
    private static final Color PAPER = new Color(0xB0, 0x30, 0x30);

    private Charts() {
    }

    static XYChart xy(String title, String xTitle, String yTitle, boolean logX, boolean logY) {
        XYChart c = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle(xTitle)
                .yAxisTitle(yTitle).build();
        Styler s = c.getStyler();
        s.setLegendPosition(Styler.LegendPosition.OutsideS);
        s.setLegendLayout(Styler.LegendLayout.Vertical); // long series names overflow a horizontal legend
        s.setChartBackgroundColor(Color.WHITE);
        s.setPlotBackgroundColor(Color.WHITE);
        c.getStyler().setXAxisLogarithmic(logX);
        c.getStyler().setYAxisLogarithmic(logY);
        c.getStyler().setXAxisDecimalPattern("#,###.##");
        c.getStyler().setYAxisDecimalPattern("#,###.##");
        return c;
    }

    static CategoryChart bars(String title, String xTitle, String yTitle) {
        CategoryChart c = new CategoryChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle(xTitle)
                .yAxisTitle(yTitle).build();
        c.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
        c.getStyler().setLegendLayout(Styler.LegendLayout.Vertical);
        c.getStyler().setChartBackgroundColor(Color.WHITE);
        c.getStyler().setPlotBackgroundColor(Color.WHITE);
        c.getStyler().setYAxisDecimalPattern("#,###.##");
        c.getStyler().setXAxisLabelRotation(20); // category names are long
        return c;
    }

    /** A measured series: a line through round markers. */
    static void line(XYChart c, String name, List<Double> xs, List<Double> ys) {
        if (!xs.isEmpty()) {
            c.addSeries(unique(c, name), xs, ys).setMarker(SeriesMarkers.CIRCLE);
        }
    }

    /** A dense series (one point per second): a thin line, no markers. */
    static void trace(XYChart c, String name, List<Double> xs, List<Double> ys, Color colour) {
        if (!xs.isEmpty()) {
            XYSeries s = c.addSeries(unique(c, name), xs, ys);
            s.setMarker(SeriesMarkers.NONE);
            s.setLineWidth(1f);
            if (colour != null) {
                s.setLineColor(colour);
            }
        }
    }

    /** Values the paper states, as points: big diamonds in the paper's colour, no line. */
    static void paperPoints(XYChart c, String name, List<Double> xs, List<Double> ys) {
        XYSeries s = c.addSeries(unique(c, name), xs, ys);
        s.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
        s.setMarker(SeriesMarkers.DIAMOND);
        s.setMarkerColor(PAPER);
    }

    /** A value the paper states, as a dashed horizontal line across [x0, x1]. */
    static void paperLine(XYChart c, String name, double x0, double x1, double y) {
        XYSeries s = c.addSeries(unique(c, name), List.of(x0, x1), List.of(y, y));
        s.setMarker(SeriesMarkers.NONE);
        s.setLineColor(PAPER);
        s.setLineStyle(new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[]{6f, 4f}, 0f));
    }

    /** A limit measured on this machine (the C spawn loop), as a dashed grey line across [x0, x1]. */
    static void limitLine(XYChart c, String name, double x0, double x1, double y) {
        XYSeries s = c.addSeries(unique(c, name), List.of(x0, x1), List.of(y, y));
        s.setMarker(SeriesMarkers.NONE);
        s.setLineColor(Color.DARK_GRAY);
        s.setLineStyle(new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[]{2f, 3f}, 0f));
    }

    private static String unique(XYChart c, String name) {
        String n = name;
        for (int i = 2; c.getSeriesMap().containsKey(n); i++) {
            n = name + " (" + i + ")";
        }
        return n;
    }

    static byte[] png(Chart<?, ?> chart) throws IOException {
        return BitmapEncoder.getBitmapBytes(chart, BitmapEncoder.BitmapFormat.PNG);
    }
}
