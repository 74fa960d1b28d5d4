/*
 * DECLARED, NOT IMPLEMENTED: the part of the Java CoG Kit API (cog-abstraction-common 2.4) the
 * Falkon provider compiles against, written from the documented provider contract so the module
 * builds with no Swift/K present. Compiled for the compiler only; never packaged: at run time
 * Swift's own jar supplies these types (see swift-provider/pom.xml and docs/swift.md).
 */
package org.globus.cog.abstraction.impl.common;

import org.globus.cog.abstraction.impl.common.task.InvalidSecurityContextException;
import org.globus.cog.abstraction.impl.common.task.TaskSubmissionException;
import org.globus.cog.abstraction.interfaces.DelegatedTaskHandler;
import org.globus.cog.abstraction.interfaces.Task;

/** Declared only: the real class keeps the task and marks it FAILED in failTask. */
public abstract class AbstractDelegatedTaskHandler implements DelegatedTaskHandler {
    public void cancel() throws InvalidSecurityContextException, TaskSubmissionException {
        throw new UnsupportedOperationException("declared only");
    }

    public Task getTask() {
        throw new UnsupportedOperationException("declared only");
    }

    protected void checkAndSetTask(Task task) throws TaskSubmissionException {
        throw new UnsupportedOperationException("declared only");
    }

    protected void failTask(String message, Exception e) {
        throw new UnsupportedOperationException("declared only");
    }
}
