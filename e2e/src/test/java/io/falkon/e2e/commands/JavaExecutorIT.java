package io.falkon.e2e.commands;

import io.falkon.executor.LocalExecutors;

import java.util.List;

/** The executor contract, run against the Java executor (its own JVM per executor). */
class JavaExecutorIT extends ExecutorContract {
    @Override
    List<String> command() {
        return LocalExecutors.javaCommand();
    }
}
