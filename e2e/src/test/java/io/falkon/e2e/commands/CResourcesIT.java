package io.falkon.e2e.commands;

import io.falkon.executor.LocalExecutors;

import java.io.IOException;
import java.util.List;

/** Named resources (GPUs given by hand, licences) against the C executor. */
class CResourcesIT extends ResourcesContract {
    @Override
    List<String> command() throws IOException {
        return LocalExecutors.cCommand();
    }
}
