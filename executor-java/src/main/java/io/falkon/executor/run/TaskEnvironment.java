package io.falkon.executor.run;

import io.falkon.protocol.auth.TokenSource;

import java.util.HashMap;
import java.util.Map;

/**
 * What a task's environment starts from: the executor's own, less the deployment's token
 * ({@code FALKON_TOKEN}). An executor is often given the token in its environment (the embedded
 * run and the provisioner do so to keep it off command lines), but a task has no use for it, and a
 * task that prints its environment would put the token in its output, its results file or the
 * shared store, where whoever reads them could submit commands. A task that sets
 * {@code FALKON_TOKEN} itself in its spec still gets it.
 */
final class TaskEnvironment {
    static final Map<String, String> BASE = base(System.getenv());

    private TaskEnvironment() {
    }

    static Map<String, String> base(Map<String, String> executorEnv) {
        Map<String, String> env = new HashMap<>(executorEnv);
        removeExecutorsOwn(env);
        return Map.copyOf(env);
    }

    /** Takes out of a copy of the executor's environment what stays with the executor. */
    static void removeExecutorsOwn(Map<String, String> env) {
        env.remove(TokenSource.ENV);
    }
}
