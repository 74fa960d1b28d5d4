package io.falkon.cli;

import io.falkon.protocol.ShellLine;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A command written once and filled from each line of a file ({@code falkon run --template
 * 'mProject {} out/{1}.fits' tiles.txt}), as GNU parallel, HyperQueue's {@code --each-line} and Slurm
 * arrays let a user do:
 * <ul>
 *   <li>{@code {}}: the whole line;</li>
 *   <li>{@code {1}}, {@code {2}}, ...: its blank-separated fields (empty when there are fewer);</li>
 *   <li>{@code {#}}: the task's number, 1 for the first line with a task.</li>
 * </ul>
 * A value made only of plain characters is put in as it is, so the command keeps the fast path of
 * lines that need no shell ({@link ShellLine}); any other value is single-quoted, so that nothing
 * in a line can become shell syntax. Each task also gets the line, unquoted, in
 * {@code $FALKON_LINE}, and its number in {@code $FALKON_TASK_NUMBER}.
 */
final class CommandTemplate {
    private static final Pattern FIELD = Pattern.compile("\\{(\\d*|#)}");

    private final String template;

    CommandTemplate(String template) {
        if (template.isBlank()) {
            throw new IllegalArgumentException("--template is empty");
        }
        if (!FIELD.matcher(template).find()) {
            throw new IllegalArgumentException("--template '" + template + "' uses no {}, {1}, ... or {#}: every "
                    + "task would be the same");
        }
        this.template = template;
    }

    /** The command for {@code line}, the {@code number}th task. */
    String fill(String line, long number) {
        String value = line.strip();
        List<String> fields = List.of(value.isEmpty() ? new String[0] : value.split("[ \t]+"));
        return fill(template, quote(value), fields, number);
    }

    /** Whether {@code command} has a {@code {}}, {@code {N}} or {@code {#}} to fill. */
    static boolean hasFields(String command) {
        return FIELD.matcher(command).find();
    }

    /**
     * {@code command} filled from separate values ({@code :::} sources): {@code {}} is them all, each
     * quoted, {@code {N}} the Nth.
     */
    static String fillWith(String command, List<String> values, long number) {
        StringBuilder all = new StringBuilder();
        for (String v : values) {
            all.append(all.length() == 0 ? "" : " ").append(quote(v));
        }
        return fill(command, all.toString(), values, number);
    }

    private static String fill(String template, String all, List<String> fields, long number) {
        Matcher m = FIELD.matcher(template);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String f = m.group(1);
            String v;
            if (f.equals("#")) {
                v = Long.toString(number);
            } else if (f.isEmpty()) {
                v = all;
            } else {
                int i = Integer.parseInt(f);
                v = i >= 1 && i <= fields.size() ? quote(fields.get(i - 1)) : "''";
            }
            m.appendReplacement(out, Matcher.quoteReplacement(v));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** The value as the shell should see it: as it is when plain, else single-quoted. */
    static String quote(String value) {
        if (!value.isEmpty() && ShellLine.direct("x " + value) != null && value.indexOf(' ') < 0) {
            return value;
        }
        return "'" + value.replace("'", "'\\''") + "'";
    }
}
