package io.falkon.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The dependencies of a task file, checked before anything runs (docs/workflows.md): a task that
 * reads an object another task of the file declares as an output, or that names others in
 * {@code after}, runs once they have succeeded. Refused, naming the line: a name or an object
 * declared twice, an {@code after} naming no task of the file, an input that no task produces and
 * the store does not hold, and a cycle. The dispatcher needs producers before their consumers: a
 * file that lists a task before one it depends on is submitted in a dependency order instead
 * (files the check keeps in memory), or refused (larger, streamed files must be in order).
 *
 * <p>In a rerun, the tasks passed over have succeeded before: what they produce is there (in the
 * store), and {@code after} them is met.
 */
final class Workflow {
    /**
     * What a task declares and needs, from its line (null for a line without any of it): its name, the
     * names it runs after, its outputs' ids (and which of them are temporary), its inputs' ids and sources.
     */
    record Deps(String name, List<String> after, List<String> outputs, List<String> inputIds,
                List<String> inputSources, List<String> temporaryOutputs) {
        Deps(String name, List<String> after, List<String> outputs, List<String> inputIds, List<String> inputSources) {
            this(name, after, outputs, inputIds, inputSources, List.of());
        }
    }

    private final String file;
    /** Where inputs that no task produces must be; null when this machine cannot tell (a remote store). */
    private final Path storeRoot;
    private final Map<String, Integer> objects = new HashMap<>();
    private final Map<String, Integer> names = new HashMap<>();
    private int n;
    private int[] lines = new int[256];
    private boolean[] selected = new boolean[256];
    /** Per task: the tasks it depends on (indices), null for none. */
    private int[][] deps = new int[256][];
    /** Needs of a task on something not (yet) declared when it was read: resolved at the end. */
    private final List<Forward> forward = new ArrayList<>();
    private boolean any;

    private record Forward(int task, String key, boolean name, String source) {
    }

    Workflow(String file, Path storeRoot) {
        this.file = file;
        this.storeRoot = storeRoot;
    }

    /** Whether any task of the file declares or needs anything of another. */
    boolean any() {
        return any;
    }

    /** The next task of the file, in file order; {@code selected} false for one that succeeded before (rerun). */
    void add(int line, boolean isSelected, Deps d) {
        int i = n++;
        if (i == lines.length) {
            lines = Arrays.copyOf(lines, i * 2);
            selected = Arrays.copyOf(selected, i * 2);
            deps = Arrays.copyOf(deps, i * 2);
        }
        lines[i] = line;
        selected[i] = isSelected;
        if (d == null) {
            return;
        }
        any |= d.name() != null || !d.after().isEmpty() || !d.outputs().isEmpty();
        if (d.name() != null) {
            Integer other = names.putIfAbsent(d.name(), i);
            if (other != null) {
                throw bad(line, "the name '" + d.name() + "' is already the name of line " + lines[other]);
            }
        }
        for (String id : d.outputs()) {
            Integer other = objects.putIfAbsent(id, i);
            if (other != null) {
                throw bad(line, "object '" + id + "' is already an output of line " + lines[other]
                        + " (one task per object)");
            }
        }
        for (String after : d.after()) {
            Integer j = names.get(after);
            if (j != null && j == i) {
                throw bad(line, "it runs after itself (a cycle)");
            } else if (j != null) {
                depend(i, j);
            } else {
                forward.add(new Forward(i, after, true, null));
            }
        }
        for (int k = 0; k < d.inputIds().size(); k++) {
            String id = d.inputIds().get(k);
            Integer j = objects.get(id);
            if (j != null) {
                if (j == i) {
                    throw bad(line, "it reads its own output '" + id + "' (a cycle)");
                }
                depend(i, j);
            } else {
                forward.add(new Forward(i, id, false, d.inputSources().get(k)));
            }
        }
    }

    private void depend(int i, int j) {
        int[] d = deps[i];
        deps[i] = d == null ? new int[]{j} : Arrays.copyOf(d, d.length + 1);
        deps[i][deps[i].length - 1] = j;
    }

    /**
     * After the last line: resolves what pointed ahead, checks the store, and returns null when the
     * file's own order puts every producer first, else an order of the selected tasks (their
     * indices among the selected ones) that does.
     *
     * @param canReorder whether the tasks are all in memory (else a file out of order is refused)
     * @throws TaskFile.BadLine naming the line of the first problem
     */
    int[] finish(boolean canReorder) {
        boolean outOfOrder = false;
        int firstAhead = -1;
        for (Forward f : forward) {
            Integer j = (f.name() ? names : objects).get(f.key());
            if (j == null) {
                if (f.name()) {
                    throw bad(lines[f.task()], "after: no task of the file is named '" + f.key() + "'");
                }
                checkStore(f);
                continue;
            }
            if (j == f.task()) {
                throw bad(lines[f.task()], "it runs after itself (a cycle)");
            }
            depend(f.task(), j);
            if (selected[j] && selected[f.task()]) {
                outOfOrder = true;
                if (firstAhead < 0) {
                    firstAhead = f.task();
                }
            }
        }
        if (!outOfOrder) {
            return null;
        }
        if (!canReorder) {
            throw bad(lines[firstAhead], "it depends on a task of a later line: a file of more than "
                    + TaskFile.KEEP_CHECKED_TASKS + " tasks (or " + (TaskFile.KEEP_CHECKED_BYTES >> 20)
                    + " MiB) must list every task after those it depends on");
        }
        return order();
    }

    private void checkStore(Forward f) {
        String source = f.source();
        if (storeRoot == null || source.startsWith("http://") || source.startsWith("https://")) {
            return;
        }
        Path p = Path.of(source).isAbsolute() ? Path.of(source) : storeRoot.resolve(source);
        if (!Files.exists(p)) {
            throw bad(lines[f.task()], "its input '" + f.key() + "' is an output of no task of the file and is not "
                    + "in the store (" + p + ")");
        }
    }

    /** Kahn's order of the selected tasks (stable: file order among the ready), or the cycle that prevents one. */
    private int[] order() {
        int[] index = new int[n]; // task -> its index among the selected, -1 for one passed over
        int m = 0;
        for (int i = 0; i < n; i++) {
            index[i] = selected[i] ? m++ : -1;
        }
        int[] pending = new int[n];
        List<List<Integer>> dependants = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            dependants.add(null);
        }
        for (int i = 0; i < n; i++) {
            if (!selected[i] || deps[i] == null) {
                continue;
            }
            for (int j : deps[i]) {
                if (selected[j]) {
                    pending[i]++;
                    if (dependants.get(j) == null) {
                        dependants.set(j, new ArrayList<>(2));
                    }
                    dependants.get(j).add(i);
                }
            }
        }
        java.util.PriorityQueue<Integer> ready = new java.util.PriorityQueue<>();
        for (int i = 0; i < n; i++) {
            if (selected[i] && pending[i] == 0) {
                ready.add(i);
            }
        }
        int[] out = new int[m];
        int k = 0;
        while (!ready.isEmpty()) {
            int i = ready.poll();
            out[k++] = index[i];
            List<Integer> ds = dependants.get(i);
            if (ds != null) {
                for (int d : ds) {
                    if (--pending[d] == 0) {
                        ready.add(d);
                    }
                }
            }
        }
        if (k < m) {
            throw cycle(pending);
        }
        return out;
    }

    /** How many steps of a cycle a message names (the first and the last half of them). */
    static final int CYCLE_SHOWN = 10;

    /** A cycle among the tasks that could not be ordered: follows dependencies until one repeats. */
    private TaskFile.BadLine cycle(int[] pending) {
        int start = -1;
        for (int i = 0; i < n && start < 0; i++) {
            if (selected[i] && pending[i] > 0) {
                start = i;
            }
        }
        List<Integer> path = new ArrayList<>();
        Map<Integer, Integer> at = new HashMap<>();
        int i = start;
        while (!at.containsKey(i)) {
            at.put(i, path.size());
            path.add(i);
            int next = -1;
            for (int j : deps[i]) {
                if (selected[j] && pending[j] > 0) {
                    next = j;
                    break;
                }
            }
            i = next;
        }
        List<Integer> loop = path.subList(at.get(i), path.size());
        StringBuilder sb = new StringBuilder("a cycle" + (loop.size() > CYCLE_SHOWN ? " of " + loop.size() + " tasks" : "")
                + ": line " + lines[loop.get(0)]);
        ArrayDeque<Integer> rest = new ArrayDeque<>(loop.subList(1, loop.size()));
        rest.add(loop.get(0));
        int shown = 0;
        for (int t : rest) {
            // a long cycle is named by its ends: a message of every line of 100,000 would be megabytes
            if (shown < CYCLE_SHOWN / 2 || shown >= rest.size() - CYCLE_SHOWN / 2) {
                sb.append(" needs line ").append(lines[t]);
            } else if (shown == CYCLE_SHOWN / 2) {
                sb.append(" needs ... (").append(rest.size() - CYCLE_SHOWN).append(" more lines)");
            }
            shown++;
        }
        return bad(lines[loop.get(0)], sb.toString());
    }

    private TaskFile.BadLine bad(int line, String message) {
        return new TaskFile.BadLine(file, line, message);
    }
}
