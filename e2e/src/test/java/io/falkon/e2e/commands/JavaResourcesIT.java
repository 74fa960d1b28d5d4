package io.falkon.e2e.commands;

import io.falkon.executor.LocalExecutors;

import java.util.List;

/** Named resources (GPUs given by hand, licences) against the Java executor. */
class JavaResourcesIT extends ResourcesContract {
    @Override
    List<String> command() {
        return LocalExecutors.javaCommand();
    }
}
