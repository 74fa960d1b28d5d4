package io.falkon.dispatcher.core;

/**
 * What only a task of a workflow carries: the keys it produces (its outputs' object ids, its name)
 * and needs to run after, which of its outputs are temporary, and its place among its instance's
 * waiting tasks. {@link Dataflow} and {@link Intermediates} own it (written there, and where a task
 * is made: {@link TaskLedger#accept}, {@link TaskLedger#rerun}); a plain task has none, and pays for
 * none of it ({@code Task.flow} is null).
 */
final class DataflowNode {
    /** The object ids its outputs declare, and its name; each null when none. */
    final String[] outputIds;
    final String name;
    /** The names it runs after (null when none); each replaced by its key's own string when found. */
    final String[] after;
    /** Which of {@link #outputIds} are temporary (intermediate) objects; null when none is. */
    final boolean[] temporary;
    /**
     * The dispatcher's own run of a producer whose temporary outputs were lost before all their
     * readers had them: not the client's task, so its result is not delivered or counted.
     */
    final boolean rerun;
    /** It reads a temporary object of its instance (counted among that object's readers). */
    boolean readsTemporary;
    /** Keys it still waits for while {@link #waiting}. */
    int missing;
    /** Waiting for its dependencies, apart from the queue: in its instance's {@link Dataflow} list. */
    boolean waiting;
    /** Its neighbours in that list. */
    Task waitPrev;
    Task waitNext;

    DataflowNode(String[] outputIds, String name, String[] after, boolean[] temporary, boolean rerun) {
        this.outputIds = outputIds;
        this.name = name;
        this.after = after;
        this.temporary = temporary;
        this.rerun = rerun;
    }

    /** Whether other tasks can wait for it: it produces an object or has a name. */
    boolean produces() {
        return outputIds != null || name != null;
    }
}
