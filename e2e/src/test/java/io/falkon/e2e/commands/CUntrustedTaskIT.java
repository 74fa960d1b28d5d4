package io.falkon.e2e.commands;

import io.falkon.executor.LocalExecutors;

import java.io.IOException;
import java.util.List;

/** Task files from people one does not trust, against the C executor. */
class CUntrustedTaskIT extends UntrustedTaskContract {
    @Override
    List<String> command() throws IOException {
        return LocalExecutors.cCommand();
    }
}
