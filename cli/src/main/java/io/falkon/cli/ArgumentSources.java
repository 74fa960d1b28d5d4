package io.falkon.cli;

import io.falkon.protocol.ShellLine;
import io.falkon.protocol.TaskSpec;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Tasks made from one command and lists of values rather than read from a file, as GNU parallel
 * and HyperQueue make them:
 * <ul>
 *   <li>{@code falkon run 'gzip {}' ::: a b c}: a task per value; {@code ::::} FILE takes the values
 *       from FILE's lines; several sources give every combination, the last source varying fastest
 *       (GNU parallel's order). {@code {}} is the values, {@code {1}}, {@code {2}}, ... each
 *       source's, {@code {#}} the task's number; a command without any is given the values at its
 *       end; with no command the values are the command;</li>
 *   <li>{@code falkon run --array 1-1000 'simulate {}'}: a task per index ({@code 1-1000},
 *       {@code 0-99:3}, {@code 1,5,9-12}), in {@code {}} and {@code $FALKON_TASK_INDEX}; a command
 *       without {@code {}} runs as it is, telling the index by the variable (HyperQueue's
 *       {@code --array} and {@code $HQ_TASK_ID}).</li>
 * </ul>
 * Values are quoted as a template's are ({@link CommandTemplate#quote}): none becomes shell syntax.
 * Combinations are made as tasks are submitted, never all held.
 */
final class ArgumentSources {
    static final String VALUES = ":::";
    static final String FILES = "::::";
    /** The most tasks one command line makes: a task's line number is an int. */
    static final long MAX_TASKS = Integer.MAX_VALUE;
    /** The largest {@code ::::} file read (its values are held). */
    static final long MAX_FILE_BYTES = 256L << 20;

    /** The sources after {@code :::}/{@code ::::} on this process's command line (set by main), or null. */
    private static volatile List<String> given;

    private final List<List<String>> sources;
    /** --array: the indices (a single source), each also in $FALKON_TASK_INDEX. */
    private final boolean array;
    private final String description;

    private ArgumentSources(List<List<String>> sources, boolean array, String description) {
        this.sources = sources;
        this.array = array;
        this.description = description;
    }

    /**
     * {@code args} without its {@code :::}/{@code ::::} part, which is kept for the run: picocli would
     * read a value such as {@code -x} as an option, and GNU parallel's values may be anything.
     * Only {@code run} and {@code submit} take them.
     */
    static String[] takeFrom(String[] args) {
        if (args.length == 0 || !(args[0].equals("run") || args[0].equals("submit"))) {
            return args;
        }
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("--")) {
                return args; // what follows is the user's, not ours
            }
            if (args[i].equals(VALUES) || args[i].equals(FILES)) {
                given = List.of(Arrays.copyOfRange(args, i, args.length));
                return Arrays.copyOfRange(args, 0, i);
            }
        }
        return args;
    }

    /** The sources given on this command line, or null. */
    static ArgumentSources fromCommandLine() throws IOException {
        List<String> g = given;
        return g == null ? null : parse(g);
    }

    /** {@code ::: a b :::: FILE ...} as sources; each must hold a value. */
    static ArgumentSources parse(List<String> words) throws IOException {
        List<List<String>> sources = new ArrayList<>();
        int i = 0;
        while (i < words.size()) {
            String sep = words.get(i++);
            if (sep.equals(VALUES)) {
                List<String> values = new ArrayList<>();
                while (i < words.size() && !words.get(i).equals(VALUES) && !words.get(i).equals(FILES)) {
                    values.add(words.get(i++));
                }
                if (values.isEmpty()) {
                    throw new Falkon.UserError("::: (source " + (sources.size() + 1) + ") has no values: give them "
                            + "after it, COMMAND ::: a b c");
                }
                sources.add(values);
            } else {
                boolean any = false;
                while (i < words.size() && !words.get(i).equals(VALUES) && !words.get(i).equals(FILES)) {
                    sources.add(lines(words.get(i++)));
                    any = true;
                }
                if (!any) {
                    throw new Falkon.UserError(":::: needs a file of values, one per line: :::: FILE");
                }
            }
        }
        ArgumentSources s = new ArgumentSources(sources, false, String.join(" ", words));
        s.size(); // too many is said now
        return s;
    }

    private static List<String> lines(String file) throws IOException {
        Path p = Path.of(file);
        if (!Files.isRegularFile(p)) {
            throw new Falkon.UserError(":::: " + file + ": no such file");
        }
        if (Files.size(p) > MAX_FILE_BYTES) {
            throw new Falkon.UserError(":::: " + file + ": over " + (MAX_FILE_BYTES >> 20) + " MiB of values; give "
                    + "the lines as a task file with --template instead (it is streamed)");
        }
        List<String> values;
        try {
            values = Files.readAllLines(p, StandardCharsets.UTF_8);
        } catch (java.nio.charset.MalformedInputException e) {
            throw new Falkon.UserError(":::: " + file + ": not valid UTF-8");
        }
        if (values.isEmpty()) {
            throw new Falkon.UserError(":::: " + file + ": no values (it is empty)");
        }
        for (int i = 0; i < values.size(); i++) {
            if (values.get(i).indexOf('\0') >= 0) {
                throw new Falkon.UserError(file + ":" + (i + 1) + ": contains a NUL character");
            }
        }
        return values;
    }

    /** {@code --array SPEC}: {@code 1-1000}, {@code 0-99:3} (every third), {@code 1,5,9-12}. */
    static ArgumentSources array(String spec) {
        List<String> values = new ArrayList<>();
        for (String part : spec.split(",", -1)) {
            String range = part.strip();
            long step = 1;
            int colon = range.indexOf(':');
            try {
                if (colon >= 0) {
                    step = Long.parseLong(range.substring(colon + 1));
                    range = range.substring(0, colon);
                }
                int dash = range.indexOf('-', 1);
                long from = Long.parseLong(dash < 0 ? range : range.substring(0, dash));
                long to = dash < 0 ? from : Long.parseLong(range.substring(dash + 1));
                if (step < 1 || to < from || from < 0) {
                    throw new NumberFormatException();
                }
                for (long v = from; v <= to; v += step) {
                    if (values.size() >= MAX_TASKS) {
                        throw new Falkon.UserError("--array " + spec + ": more than " + MAX_TASKS + " tasks");
                    }
                    values.add(Long.toString(v));
                }
            } catch (NumberFormatException e) {
                throw new Falkon.UserError("--array " + spec + ": '" + part + "' is not an index or a range (1-1000, "
                        + "0-99:3 for every third, 1,5,9-12; indices from 0, a range from low to high)");
            }
        }
        return new ArgumentSources(List.of(values), true, "--array " + spec);
    }

    /** How many tasks: the product of the sources' sizes. */
    long size() {
        long n = 1;
        for (List<String> s : sources) {
            if (n > MAX_TASKS / s.size()) {
                throw new Falkon.UserError(description + ": more than " + MAX_TASKS + " combinations");
            }
            n *= s.size();
        }
        return n;
    }

    /** What made the tasks, for messages (in place of a file's name). */
    String description() {
        return description;
    }

    /** The values of task {@code number} (from 1): one per source, the last source varying fastest. */
    List<String> values(long number) {
        String[] v = new String[sources.size()];
        long k = number - 1;
        for (int s = sources.size() - 1; s >= 0; s--) {
            List<String> source = sources.get(s);
            v[s] = source.get((int) (k % source.size()));
            k /= source.size();
        }
        return Arrays.asList(v);
    }

    /** Task {@code number}'s command, from {@code command} (empty: the values are the command). */
    String command(String command, long number) {
        List<String> values = values(number);
        if (CommandTemplate.hasFields(command)) {
            return CommandTemplate.fillWith(command, values, number);
        }
        if (array) {
            return command;
        }
        if (command.isEmpty()) {
            return String.join(" ", values); // as GNU parallel: each combination is a command
        }
        StringBuilder sb = new StringBuilder(command);
        for (String v : values) {
            sb.append(' ').append(CommandTemplate.quote(v));
        }
        return sb.toString();
    }

    /** Task {@code number}: its command through the shell, with its number (and index) in the environment. */
    TaskSpec.Builder task(String command, long number) {
        TaskSpec.Builder b = ShellLine.task(command(command, number)).env("FALKON_TASK_NUMBER", Long.toString(number));
        if (array) {
            b.env("FALKON_TASK_INDEX", values(number).get(0));
        }
        return b;
    }
}
