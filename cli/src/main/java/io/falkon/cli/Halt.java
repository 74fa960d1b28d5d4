package io.falkon.cli;

/**
 * {@code --halt WHEN,fail=N}: stop a run early once enough of its tasks have failed, as GNU
 * parallel's {@code --halt}. {@code soon}: nothing more starts (tasks not yet dispatched are
 * cancelled), the running ones finish; {@code now}: the running ones are cancelled too. {@code N}
 * is a count, or with {@code %} a share of the file's tasks.
 *
 * @param now       cancel the running tasks too
 * @param threshold failures (or, with {@code percent}, percent of the tasks) that trigger it
 */
record Halt(boolean now, double threshold, boolean percent) {

    /** The policy {@code spec} names, or null for {@code never} (and no option). */
    static Halt parse(String spec) {
        if (spec == null || spec.equals("never")) {
            return null;
        }
        String[] parts = spec.split(",", 2);
        if (parts.length != 2 || !(parts[0].equals("soon") || parts[0].equals("now"))
                || !parts[1].startsWith("fail=")) {
            throw new IllegalArgumentException("--halt must be never, soon,fail=N or now,fail=N (N a count, or "
                    + "a percentage like 10%), got '" + spec + "'");
        }
        String n = parts[1].substring("fail=".length());
        boolean percent = n.endsWith("%");
        double v;
        try {
            v = Double.parseDouble(percent ? n.substring(0, n.length() - 1) : n);
        } catch (NumberFormatException e) {
            v = -1;
        }
        if (!(v > 0) || (!percent && v != Math.floor(v)) || (percent && v > 100)) {
            throw new IllegalArgumentException("--halt " + spec + ": fail= needs a whole number of tasks >= 1 or a "
                    + "percentage in (0, 100]");
        }
        return new Halt(parts[0].equals("now"), v, percent);
    }

    /** Whether {@code failed} failures of {@code total} tasks (-1: unknown) reach the threshold. */
    boolean reached(long failed, long total) {
        return percent ? total > 0 && 100.0 * failed >= threshold * total : failed >= threshold;
    }

    /** As given: {@code soon,fail=3} or {@code now,fail=10%}. */
    String spec() {
        String n = percent ? (threshold == Math.floor(threshold) ? Long.toString((long) threshold)
                : Double.toString(threshold)) + "%" : Long.toString((long) threshold);
        return (now ? "now" : "soon") + ",fail=" + n;
    }
}
