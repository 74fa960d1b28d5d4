package io.falkon.executor;

/** Byte counts as people write them: {@code 1048576}, {@code 512k}, {@code 500m}, {@code 4g}, {@code 1t}. */
public final class Bytes {
    private Bytes() {
    }

    /** @throws IllegalArgumentException naming the text that is not a size */
    public static long parse(String text) {
        String t = text.trim().toLowerCase();
        if (t.endsWith("b")) {
            t = t.substring(0, t.length() - 1);
        }
        long unit = 1;
        if (!t.isEmpty()) {
            switch (t.charAt(t.length() - 1)) {
                case 'k' -> unit = 1L << 10;
                case 'm' -> unit = 1L << 20;
                case 'g' -> unit = 1L << 30;
                case 't' -> unit = 1L << 40;
                default -> unit = 1;
            }
            if (unit > 1) {
                t = t.substring(0, t.length() - 1);
            }
        }
        try {
            double v = Double.parseDouble(t);
            if (v < 0 || Double.isNaN(v) || v * unit > Long.MAX_VALUE) {
                throw new NumberFormatException();
            }
            return (long) (v * unit);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' is not a size (examples: 1048576, 512k, 500m, 4g)");
        }
    }
}
