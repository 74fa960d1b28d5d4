package io.falkon.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.protocol.TaskInput;
import io.falkon.protocol.TaskOutput;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code --skip-done}: which tasks of a file are done already, as make and Snakemake decide it, and
 * why each of the others runs. A task is done when
 * <ul>
 * <li>it declares outputs that go to the store, every one is there, and none is older than an
 *     input of the task that is in the store; or</li>
 * <li>its outputs are all temporary and a task reads them (it runs again only when a task that
 *     reads them runs: temporary outputs were never stored); or</li>
 * <li>it declares no outputs, and the results file ({@code --results}, when it exists) says its line,
 *     as written now, succeeded the last time it ran;</li>
 * </ul>
 * and no task it depends on (the producer of an input, a task it runs {@code after}) runs. A task
 * that runs brings back the producers of the temporary inputs it reads, as a rerun does
 * ({@link Rerun#withTemporaryProducers}). A task with an archived output is never judged done
 * (what an archive holds is not looked into): it runs.
 *
 * <p>Reads the file once, keeping per task its line, its text and what it declares.
 */
final class SkipDone {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The decision: whether each line's task runs, and why (for {@code --dry-run} and the results). */
    static final class Plan {
        private final Map<Integer, String> why = new HashMap<>();
        private final Map<Integer, Boolean> runs = new HashMap<>();
        private final List<Integer> order = new ArrayList<>();
        private final Map<Integer, String> texts = new HashMap<>();
        private final Map<Integer, Long> numbers = new HashMap<>();

        /** Whether the task of {@code line} runs (lines without a task: false). */
        boolean runs(int line) {
            return runs.getOrDefault(line, false);
        }

        /** Why the task of {@code line} runs, or why it is done. */
        String why(int line) {
            return why.get(line);
        }

        /** The file's task lines, in file order. */
        List<Integer> lines() {
            return order;
        }

        /** The line as written (the results' {@code command}). */
        String text(int line) {
            return texts.get(line);
        }

        /** The task's number in the file (from 1). */
        long number(int line) {
            return numbers.get(line);
        }

        long skipped() {
            return runs.values().stream().filter(r -> !r).count();
        }
    }

    /** One task of the file, as far as the decision needs it. */
    private static final class Node {
        int line;
        long number;
        String text;
        String name;
        List<String> after = List.of();
        List<TaskInput> inputs = List.of();
        List<TaskOutput> outputs = List.of();
        /** Tasks that depend on this one, with what they need of it. */
        final List<Node> dependants = new ArrayList<>(0);
        final List<String> needs = new ArrayList<>(0);
        boolean runs;
        String why;
    }

    private SkipDone() {
    }

    /**
     * @param storeRoot where outputs are stored ({@code falkon run}'s {@code --store}; null when not
     *                  known here: a task that declares outputs is then refused)
     * @param results   the results file of earlier runs (null: none), whose successes decide for tasks
     *                  that declare no outputs
     */
    static Plan plan(String file, TaskFile.Format format, Path storeRoot, Path results) throws IOException {
        Map<Integer, String> succeeded = results == null ? Map.of() : succeededCommands(results);
        List<Node> nodes = new ArrayList<>();
        Map<String, Node> producerOf = new HashMap<>();
        Map<String, Node> named = new HashMap<>();
        try (TaskFile f = TaskFile.open(file, format)) {
            while (f.hasNext()) {
                TaskFile.Entry e = f.next();
                Node n = new Node();
                n.line = e.line();
                n.number = e.number();
                n.text = e.text();
                Workflow.Deps d = e.deps();
                if (d != null) {
                    n.name = d.name();
                    n.after = d.after();
                    n.inputs = e.spec().inputs();
                    n.outputs = e.spec().outputs();
                    n.outputs.forEach(o -> producerOf.put(o.id(), n));
                    if (n.name != null) {
                        named.put(n.name, n);
                    }
                }
                nodes.add(n);
            }
        }
        for (Node n : nodes) {
            for (TaskInput in : n.inputs) {
                Node p = producerOf.get(in.id());
                if (p != null) {
                    p.dependants.add(n);
                    p.needs.add("it needs '" + in.id() + "' from it");
                }
            }
            for (String a : n.after) {
                Node p = named.get(a);
                if (p != null) {
                    p.dependants.add(n);
                    p.needs.add("it runs after '" + a + "'");
                }
            }
        }
        ArrayDeque<Node> running = new ArrayDeque<>();
        for (Node n : nodes) {
            n.why = ownReason(n, storeRoot, succeeded, results);
            if (n.runs) {
                running.add(n);
            }
        }
        // what depends on a task that runs runs too (its inputs change, or it waits for it)
        while (!running.isEmpty()) {
            Node p = running.poll();
            for (int i = 0; i < p.dependants.size(); i++) {
                Node d = p.dependants.get(i);
                if (!d.runs) {
                    d.runs = true;
                    d.why = "line " + p.line + " runs, and " + p.needs.get(i);
                    running.add(d);
                }
            }
        }
        // a task that runs needs its temporary inputs made again: their producers come back, and theirs
        for (Node n : nodes) {
            if (n.runs) {
                running.add(n);
            }
        }
        while (!running.isEmpty()) {
            Node n = running.poll();
            for (TaskInput in : n.inputs) {
                Node p = producerOf.get(in.id());
                if (p != null && !p.runs && isTemporary(p, in.id())) {
                    p.runs = true;
                    p.why = "it makes the temporary input '" + in.id() + "' of line " + n.line + ", which runs";
                    running.add(p);
                }
            }
        }
        Plan plan = new Plan();
        for (Node n : nodes) {
            plan.order.add(n.line);
            plan.runs.put(n.line, n.runs);
            plan.why.put(n.line, n.why);
            plan.texts.put(n.line, n.text);
            plan.numbers.put(n.line, n.number);
        }
        return plan;
    }

    private static boolean isTemporary(Node producer, String id) {
        return producer.outputs.stream().anyMatch(o -> o.id().equals(id) && o.temporary());
    }

    /** Sets {@code n.runs} from the task's own evidence, and returns why. */
    private static String ownReason(Node n, Path storeRoot, Map<Integer, String> succeeded, Path results)
            throws IOException {
        List<TaskOutput> stored = n.outputs.stream().filter(o -> !o.temporary()).toList();
        for (TaskOutput o : stored) {
            if (o.archived()) {
                n.runs = true;
                return "its output '" + o.id() + "' goes into an archive, which --skip-done does not look into";
            }
        }
        if (!stored.isEmpty()) {
            if (storeRoot == null) {
                throw new Falkon.UserError("--skip-done: line " + n.line + " declares outputs, and where the store is "
                        + "is not known here: give --store DIR, the executors' shared store as this machine sees it");
            }
            FileTime oldest = null;
            String oldestId = null;
            for (TaskOutput o : stored) {
                Path p = storeRoot.resolve(o.id());
                if (!Files.isRegularFile(p)) {
                    n.runs = true;
                    return "its output '" + o.id() + "' is not in the store";
                }
                FileTime t = Files.getLastModifiedTime(p);
                if (oldest == null || t.compareTo(oldest) < 0) {
                    oldest = t;
                    oldestId = o.id();
                }
            }
            for (TaskInput in : n.inputs) {
                Path p = storedSource(storeRoot, in);
                if (p != null && Files.isRegularFile(p) && Files.getLastModifiedTime(p).compareTo(oldest) > 0) {
                    n.runs = true;
                    return "its output '" + oldestId + "' is older than its input '" + in.id() + "'";
                }
            }
            return "its outputs are in the store";
        }
        if (!n.outputs.isEmpty() && !n.dependants.isEmpty()) {
            return "its outputs are temporary, and the tasks that read them are done";
        }
        String recorded = succeeded.get(n.line);
        if (recorded != null && recorded.equals(n.text)) {
            return "it succeeded before (" + results + ")";
        }
        n.runs = true;
        if (recorded != null) {
            return "its line is not what succeeded before (" + results + ")";
        }
        return results == null ? "it declares no outputs, and no results file (--results) says it succeeded"
                : "it declares no outputs, and " + results + " has no success of its line";
    }

    /** Where an input is in the store, or null: fetched from elsewhere (http, https). */
    private static Path storedSource(Path storeRoot, TaskInput in) {
        String s = in.source();
        if (s.startsWith("http://") || s.startsWith("https://")) {
            return null;
        }
        return Path.of(s).isAbsolute() ? Path.of(s) : storeRoot.resolve(s);
    }

    /**
     * The lines whose last result in {@code results} succeeded (a task skipped as done included),
     * each with its line as written then ({@code ""} when the result does not say).
     */
    static Map<Integer, String> succeededCommands(Path results) throws IOException {
        Map<Integer, String> ok = new HashMap<>();
        int n = 0;
        try (BufferedReader r = Files.newBufferedReader(results, StandardCharsets.UTF_8)) {
            String text;
            while ((text = r.readLine()) != null) {
                n++;
                if (text.isBlank()) {
                    continue;
                }
                JsonNode o = Rerun.result(results, n, text, "--skip-done");
                int line = o.get("line").asInt();
                if (ResultJson.succeeded(o)) {
                    ok.put(line, o.path("command").asText(""));
                } else {
                    ok.remove(line);
                }
            }
        }
        return ok;
    }

    /** {@code plan} as {@code --dry-run} tells it: each task's fate and why, on standard error. */
    static void explain(Plan plan, java.io.PrintStream err) {
        long skipped = 0;
        for (int line : plan.lines()) {
            boolean runs = plan.runs(line);
            skipped += runs ? 0 : 1;
            err.println("line " + line + ": " + (runs ? "runs: " : "done: ") + plan.why(line));
        }
        err.println((plan.lines().size() - skipped) + " of the " + plan.lines().size() + " tasks would run; "
                + skipped + (skipped == 1 ? " is done" : " are done"));
    }
}
