package io.falkon.cli;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import io.falkon.protocol.arch.NoTestJars;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * Project-wide: no two packages of Falkon depend on each other, in any module (this module's tests
 * see every other module). The build keeps modules from forming circles; this keeps the packages
 * inside them from doing so.
 *
 * <p>One cycle predates the rule, between the client API's package and the sub-package that
 * implements its transports; its back edge (the transports using the API's types) is named here,
 * and only it: any other dependency that closes a cycle fails (docs/architecture.md, "Package
 * cycles").
 */
@AnalyzeClasses(packages = "io.falkon", importOptions = {ImportOption.DoNotIncludeTests.class,
        NoTestJars.class})
class PackageCyclesTest {

    @ArchTest
    static final ArchRule noPackageCycles = slices().matching("io.falkon.(**)").should().beFreeOfCycles()
            // the transports throw the client API's exceptions and read its instance keys
            .ignoreDependency(resideInAPackage("io.falkon.client.transport"), resideInAPackage("io.falkon.client"));
}
