/*
 * DECLARED, NOT IMPLEMENTED: the part of the Java CoG Kit API (cog-abstraction-common 2.4) the
 * Falkon provider compiles against, written from the documented provider contract so the module
 * builds with no Swift/K present. Compiled for the compiler only; never packaged: at run time
 * Swift's own jar supplies these types (see swift-provider/pom.xml and docs/swift.md).
 */
package org.globus.cog.abstraction.impl.common.execution;

public class JobException extends Exception {
    private final int exitCode;

    public JobException(int exitCode) {
        this.exitCode = exitCode;
    }

    public JobException(String message, int exitCode) {
        super(message);
        this.exitCode = exitCode;
    }

    public int getExitCode() {
        return exitCode;
    }
}
