package io.falkon.dispatcher.policy;

import io.falkon.protocol.Execution;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.TaskStatus;

/** Results a fake executor reports. */
final class ReliabilityTestSupport {
    private ReliabilityTestSupport() {
    }

    static Execution failed(TaskStatus status) {
        return new Execution(status, -1, 0, 1, 2, new byte[0], new byte[0], "", ExtField.NONE);
    }
}
