package io.falkon.dispatcher.core;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaFieldAccess;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each part of the core owns its state (HyperQueue's tako model, on one thread): the records the
 * parts share — {@link Task}, {@link Instance}, {@link ExecutorState} — are written field by field
 * only by the part this table names, or by the record's own methods. A collection field is not even
 * read elsewhere (a reader could change it): others use the record's read-only views. Read from the
 * compiled classes, so a new write anywhere in the module is checked.
 */
class CoreOwnershipTest {
    /** Field → the parts that may write it; a field not listed is the record's alone. */
    private static final Map<Class<?>, Map<String, Set<Class<?>>>> OWNERS = Map.of(
            Task.class, Map.ofEntries(
                    // the queue's intrusive list (a waiting task is in its node's list instead)
                    Map.entry("prev", Set.of(TaskQueue.class)),
                    Map.entry("next", Set.of(TaskQueue.class)),
                    Map.entry("queued", Set.of(TaskQueue.class)),
                    Map.entry("fairKey", Set.of(TaskQueue.class)),
                    Map.entry("turn", Set.of(TaskQueue.class)),
                    Map.entry("qPrev", Set.of(TaskQueue.class)),
                    Map.entry("qNext", Set.of(TaskQueue.class)),
                    Map.entry("windowNode", Set.of(Window.class)),
                    Map.entry("deadlineTick", Set.of(Deadlines.class)),
                    Map.entry("hasDeadline", Set.of(Deadlines.class)),
                    // where it is from acceptance to its final result
                    Map.entry("executor", Set.of(TaskLedger.class)),
                    Map.entry("dispatchedMicros", Set.of(TaskLedger.class)),
                    Map.entry("attempt", Set.of(TaskLedger.class)),
                    Map.entry("finished", Set.of(TaskLedger.class)),
                    // a workflow's task's own record (null for a plain task), made where the task is
                    Map.entry("flow", Set.of(TaskLedger.class)),
                    Map.entry("retriesOnFailure", Set.of(TaskLedger.class))),
            DataflowNode.class, Map.ofEntries(
                    // what it waits for, and its place among its instance's waiting tasks
                    Map.entry("readsTemporary", Set.of(Dataflow.class)),
                    Map.entry("missing", Set.of(Dataflow.class)),
                    Map.entry("waiting", Set.of(Dataflow.class)),
                    Map.entry("waitPrev", Set.of(Dataflow.class)),
                    Map.entry("waitNext", Set.of(Dataflow.class))),
            Instance.class, Map.ofEntries(
                    Map.entry("queued", Set.of(TaskLedger.class)),
                    Map.entry("running", Set.of(TaskLedger.class)),
                    Map.entry("waiting", Set.of(TaskLedger.class)),
                    Map.entry("completed", Set.of(TaskLedger.class)),
                    Map.entry("succeeded", Set.of(TaskLedger.class)),
                    Map.entry("cancelled", Set.of(TaskLedger.class)),
                    // its turn in the queue (fair share)
                    Map.entry("queueOwn", Set.of(TaskQueue.class)),
                    Map.entry("owner", Set.of(InstanceRegistry.class)),
                    Map.entry("detached", Set.of(InstanceRegistry.class)),
                    Map.entry("detachedMicros", Set.of(InstanceRegistry.class)),
                    Map.entry("lastRequestMicros", Set.of(InstanceRegistry.class)),
                    Map.entry("gone", Set.of(InstanceRegistry.class)),
                    Map.entry("unacked", Set.of(InstanceRegistry.class)),
                    Map.entry("unackedBytes", Set.of(InstanceRegistry.class)),
                    Map.entry("spilling", Set.of(InstanceRegistry.class)),
                    Map.entry("spilledFromSeq", Set.of(InstanceRegistry.class)),
                    Map.entry("spilledThroughSeq", Set.of(InstanceRegistry.class)),
                    Map.entry("ackedSeq", Set.of(InstanceRegistry.class))),
            ExecutorState.class, Map.ofEntries(
                    Map.entry("credits", Set.of(ExecutorPool.class)),
                    Map.entry("alive", Set.of(ExecutorPool.class)),
                    Map.entry("inRing", Set.of(ExecutorPool.class)),
                    Map.entry("suspended", Set.of(ExecutorPool.class)),
                    Map.entry("suspendedUntilMicros", Set.of(ExecutorPool.class)),
                    Map.entry("suspensions", Set.of(ExecutorPool.class)),
                    Map.entry("failures", Set.of(ExecutorPool.class)),
                    Map.entry("completed", Set.of(ExecutorPool.class)),
                    Map.entry("outcomes", Set.of(ExecutorPool.class)),
                    Map.entry("tasks", Set.of(TaskLedger.class)),
                    Map.entry("memoryInUseMiB", Set.of(TaskLedger.class)),
                    Map.entry("diskInUseMiB", Set.of(TaskLedger.class)),
                    Map.entry("cached", Set.of(CacheIndex.class)),
                    // the temporary objects it holds for their readers
                    Map.entry("held", Set.of(Intermediates.class))));

    /** Fields holding a collection its owner changes through method calls: no one else touches them at all. */
    private static final Set<String> COLLECTIONS = Set.of("Instance.unacked", "ExecutorState.tasks",
            "ExecutorState.cached", "ExecutorState.outcomes", "ExecutorState.held");

    private static final JavaClasses CORE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.falkon.dispatcher.core");

    /** The class an access is written in, with nested and anonymous classes counted as their top-level class. */
    private static String part(JavaFieldAccess access) {
        String name = access.getOriginOwner().getName();
        int nested = name.indexOf('$');
        return nested < 0 ? name : name.substring(0, nested);
    }

    @Test
    void onlyTheOwningPartWritesARecordsField() {
        List<String> violations = new ArrayList<>();
        Set<String> used = new TreeSet<>();
        OWNERS.forEach((record, table) -> {
            JavaClass jc = CORE.get(record);
            for (JavaFieldAccess access : jc.getFieldAccessesToSelf()) {
                String field = access.getTarget().getName();
                String key = record.getSimpleName() + "." + field;
                boolean touchesCollection = COLLECTIONS.contains(key);
                if (access.getAccessType() != JavaFieldAccess.AccessType.SET && !touchesCollection) {
                    continue; // reading a plain field is anyone's
                }
                String from = part(access);
                if (from.equals(record.getName())) {
                    continue;
                }
                Set<Class<?>> owners = table.getOrDefault(field, Set.of());
                if (owners.stream().anyMatch(o -> o.getName().equals(from))) {
                    used.add(key + "<-" + from);
                } else {
                    violations.add(key + (touchesCollection ? " touched" : " written") + " by "
                            + access.getOrigin().getFullName() + " (" + access.getSourceCodeLocation()
                            + "); its owners: " + owners.stream().map(Class::getSimpleName).sorted().toList());
                }
            }
        });
        assertThat(violations).as("writes outside the owning part").isEmpty();

        // the table stays true: every owner it names does write the field
        List<String> unused = new ArrayList<>();
        OWNERS.forEach((record, table) -> table.forEach((field, owners) -> owners.forEach(o -> {
            String key = record.getSimpleName() + "." + field + "<-" + o.getName();
            if (!used.contains(key)) {
                unused.add(key);
            }
        })));
        assertThat(unused).as("owners in the table that no longer write the field").isEmpty();
    }
}
