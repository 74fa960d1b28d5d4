/*
 * DECLARED, NOT IMPLEMENTED: the part of the Java CoG Kit API (cog-abstraction-common 2.4) the
 * Falkon provider compiles against, written from the documented provider contract so the module
 * builds with no Swift/K present. Compiled for the compiler only; never packaged: at run time
 * Swift's own jar supplies these types (see swift-provider/pom.xml and docs/swift.md).
 */
package org.globus.cog.abstraction.interfaces;

public interface Status extends java.io.Serializable {
    int UNSUBMITTED = 0;
    int SUBMITTED = 1;
    int ACTIVE = 2;
    int FAILED = 5;
    int CANCELED = 6;
    int COMPLETED = 7;
    int SUBMITTING = 8;

    int getStatusCode();

    Exception getException();

    String getMessage();
}
