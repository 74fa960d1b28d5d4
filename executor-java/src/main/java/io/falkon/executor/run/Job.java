package io.falkon.executor.run;

import io.falkon.protocol.TaskSpec;

import java.util.List;
import java.util.Map;

/**
 * One dispatched task as the executor holds it; {@code generation} is the connection it came on
 * (a result for an older connection is dropped: the dispatcher has re-queued that task).
 *
 * @param hints  peers ({@code host:port}) believed to cache each input, by object id
 * @param bypass read inputs straight from the shared store and cache nothing (first-available)
 */
public record Job(long taskId, int attempt, TaskSpec spec, int generation, Map<String, List<String>> hints,
                  boolean bypass) {

    public Job(long taskId, int attempt, TaskSpec spec, int generation) {
        this(taskId, attempt, spec, generation, Map.of(), false);
    }

    /** The same job with these variables added to its spec's environment (its named resources). */
    public Job withEnv(Map<String, String> env) {
        return env.isEmpty() ? this : new Job(taskId, attempt, spec.toBuilder().env(env).build(), generation, hints,
                bypass);
    }

    /** The slots it takes at once: the cores its spec states, else 1. */
    public int cores() {
        return spec.cores();
    }
}
