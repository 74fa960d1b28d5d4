package io.falkon.e2e.commands;

import io.falkon.executor.LocalExecutors;

import java.util.List;

/** Task files from people one does not trust, against the Java executor. */
class JavaUntrustedTaskIT extends UntrustedTaskContract {
    @Override
    List<String> command() {
        return LocalExecutors.javaCommand();
    }
}
