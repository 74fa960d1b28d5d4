package io.falkon.swift;

import org.globus.cog.abstraction.impl.common.execution.TaskHandlerImpl;
import org.globus.cog.abstraction.interfaces.DelegatedTaskHandler;

/**
 * The execution provider {@code falkon} (registered in {@code cog-provider.properties}): Swift
 * creates one per site and asks it for a handler per job.
 */
public class TaskHandler extends TaskHandlerImpl {
    @Override
    protected DelegatedTaskHandler newDelegatedTaskHandler() {
        return new JobHandler();
    }
}
