package io.falkon.protocol.arch;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;

/**
 * For the ArchUnit tests of every module: leaves out the other modules' shared test fixtures, which
 * reach a module's tests as test jars ({@code *-tests.jar}) that {@code ImportOption.DoNotIncludeTests}
 * does not recognise.
 */
public final class NoTestJars implements ImportOption {
    @Override
    public boolean includes(Location location) {
        return !location.contains("-tests.jar");
    }
}
