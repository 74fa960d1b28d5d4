package io.falkon.bench.report;

/** How a value reads in a table: grouped integers, three decimals below 100, none above. */
final class Cells {
    private Cells() {
    }

    static String format(Object v) {
        if (v instanceof Integer || v instanceof Long) {
            return String.format("%,d", ((Number) v).longValue());
        }
        if (v instanceof Number n) {
            double d = n.doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                return String.valueOf(d);
            }
            return Math.abs(d) >= 100 ? String.format("%,.0f", d) : String.format("%.3f", d);
        }
        return v == null ? "" : String.valueOf(v);
    }
}
