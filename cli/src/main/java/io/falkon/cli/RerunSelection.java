package io.falkon.cli;

import io.falkon.protocol.ExtTags;
import io.falkon.protocol.TaskSpec;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What a rerun ({@code --rerun-failed}) passes over, for the tasks it runs: the tasks that succeeded
 * before are not run again, so a task that runs {@code after} one of them (by name) runs without
 * waiting for it, whichever line it is on. {@link TaskFile} tells it each task it passes over.
 */
final class RerunSelection {
    /** Names of the tasks passed over (they succeeded before: running after them is met). */
    private final Set<String> doneNames = new HashSet<>();

    /** A task passed over, with what it declares (null: nothing). */
    void passedOver(Workflow.Deps deps) {
        if (deps != null && deps.name() != null) {
            doneNames.add(deps.name());
        }
    }

    boolean passedOverAny() {
        return !doneNames.isEmpty();
    }

    /** {@code spec} without the {@code after} names of tasks passed over so far. */
    TaskSpec withoutDone(TaskSpec spec, Workflow.Deps d) {
        if (doneNames.isEmpty() || d.after().isEmpty() || d.after().stream().noneMatch(doneNames::contains)) {
            return spec;
        }
        return withoutAfter(spec, doneNames);
    }

    /** {@code spec} without the {@code after} names of every task passed over (a file read whole). */
    TaskSpec withoutPassedOver(TaskSpec spec) {
        return withoutAfter(spec, doneNames);
    }

    /** {@code spec} running after none of {@code done}. */
    static TaskSpec withoutAfter(TaskSpec spec, Set<String> done) {
        List<String> keep = spec.after().stream().filter(n -> !done.contains(n)).toList();
        TaskSpec cleared = new TaskSpec(spec.argv(), spec.env(), spec.workDir(), spec.wallTimeMillis(),
                spec.ext().stream().filter(f -> f.tag() != ExtTags.AFTER).toList());
        return keep.isEmpty() ? cleared : cleared.toBuilder().after(keep).build();
    }
}
