/*
 * DECLARED, NOT IMPLEMENTED: the part of the Java CoG Kit API (cog-abstraction-common 2.4) the
 * Falkon provider compiles against, written from the documented provider contract so the module
 * builds with no Swift/K present. Compiled for the compiler only; never packaged: at run time
 * Swift's own jar supplies these types (see swift-provider/pom.xml and docs/swift.md).
 */
package org.globus.cog.abstraction.interfaces;

import org.globus.cog.abstraction.impl.common.task.IllegalSpecException;
import org.globus.cog.abstraction.impl.common.task.InvalidSecurityContextException;
import org.globus.cog.abstraction.impl.common.task.InvalidServiceContactException;
import org.globus.cog.abstraction.impl.common.task.TaskSubmissionException;

public interface DelegatedTaskHandler {
    void submit(Task task) throws IllegalSpecException, InvalidSecurityContextException,
            InvalidServiceContactException, TaskSubmissionException;

    void suspend() throws InvalidSecurityContextException, TaskSubmissionException;

    void resume() throws InvalidSecurityContextException, TaskSubmissionException;

    void cancel() throws InvalidSecurityContextException, TaskSubmissionException;

    void cancel(String message) throws InvalidSecurityContextException, TaskSubmissionException;
}
