package io.falkon.cli;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.freeze.FreezingArchRule;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * Project-wide: no two packages of Falkon depend on each other, in any module (this module's tests
 * see every other module). The build keeps modules from forming circles; this keeps the packages
 * inside them from doing so.
 *
 * <p>Three cycles predate the rule, each between a component's API package and the sub-package
 * that implements it ({@code client} and {@code client.transport}, {@code datacache} and
 * {@code datacache.fetch}, {@code provisioner} and {@code provisioner.core}): they are frozen in
 * {@code src/test/resources/archunit-frozen} (ArchUnit's record of known violations, compared
 * without line numbers), so the rule fails on any new dependency that closes a cycle, and the
 * record shrinks as they are taken apart (docs/architecture.md, "Package cycles").
 */
@AnalyzeClasses(packages = "io.falkon", importOptions = {ImportOption.DoNotIncludeTests.class,
        PackageCyclesTest.NoTestJars.class})
class PackageCyclesTest {

    /** The modules' shared test fixtures come as test jars, which DoNotIncludeTests does not recognise. */
    static final class NoTestJars implements ImportOption {
        @Override
        public boolean includes(Location location) {
            return !location.contains("-tests.jar");
        }
    }

    @ArchTest
    static final ArchRule noPackageCycles = FreezingArchRule.freeze(
            slices().matching("io.falkon.(**)").should().beFreeOfCycles());
}
