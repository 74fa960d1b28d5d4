package io.falkon.cli;

import io.falkon.dispatcher.core.LatencyHistogram;
import io.falkon.dispatcher.core.StatusSnapshot;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import io.falkon.protocol.arch.NoTestJars;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.simpleName;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The dispatcher's layering inside its modules. The walls between modules are the build's: the
 * core ({@code dispatcher-core}) cannot see a transport, and no transport module sees another.
 * What a module could still do and must not is here: the core and the policies do no I/O (Netty
 * reaches them through the protocol module), transports reach the scheduler only through the
 * admission stage (they implement its {@code Link}), the monitor reads snapshots only, and a policy
 * sees only its own interfaces. Here, in the one module whose tests see every other (the in-process
 * transport's module depends on the dispatcher's only for its tests).
 */
@AnalyzeClasses(packages = "io.falkon.dispatcher", importOptions = {ImportOption.DoNotIncludeTests.class,
        NoTestJars.class})
class DispatcherArchitectureTest {

    @ArchTest
    static final ArchRule coreAndPoliciesDoNoNetworking = noClasses()
            .that().resideInAnyPackage("..dispatcher.core..", "..dispatcher.policy..")
            .should().dependOnClassesThat().resideInAnyPackage("io.netty..", "java.net..", "java.nio.channels..",
                    "org.apache.axis2..", "org.apache.axiom..")
            .because("the scheduler owns its state on one thread and does no I/O");

    @ArchTest
    static final ArchRule theCoreNeedsOnlyTheProtocol = classes()
            .that().resideInAnyPackage("..dispatcher.core..", "..dispatcher.policy..", "..dispatcher.admission..")
            .should().onlyDependOnClassesThat().resideInAnyPackage("java..", "io.falkon.protocol..",
                    "io.falkon.dispatcher.core..", "io.falkon.dispatcher.policy..", "io.falkon.dispatcher.admission..",
                    "org.slf4j..")
            .because("the core, its policies and the admission stage are a module of their own that depends on "
                    + "the protocol alone: JSON, HTTP and the journal's files are its ports' implementations");

    @ArchTest
    static final ArchRule transportsGoThroughAdmission = noClasses()
            .that().resideInAnyPackage("..dispatcher.tcp..", "..dispatcher.ws..", "..dispatcher.inprocess..")
            .should().dependOnClassesThat(resideInAPackage("..dispatcher.core..")
                    .and(not(simpleName("Link").or(simpleName("BufferedLink")))))
            .because("authentication and limits live in one place, the admission stage: a transport hands it "
                    + "messages and never reaches the scheduler itself");

    @ArchTest
    static final ArchRule theMonitorReadsSnapshotsOnly = noClasses().that().resideInAPackage("..dispatcher.monitor..")
            .should().dependOnClassesThat(resideInAPackage("..dispatcher.core..")
                    .and(not(belongToAnyOf(StatusSnapshot.class, LatencyHistogram.class))))
            .because("the dashboard and /metrics are built from immutable snapshots the scheduler hands out, and "
                    + "authenticate through the admission stage like every listener");

    @ArchTest
    static final ArchRule policiesSeeOnlyTheirInterfaces = noClasses().that().resideInAPackage("..dispatcher.policy..")
            .should().dependOnClassesThat().resideInAPackage("..dispatcher.core..")
            .because("a policy sees the queue and executors only through SchedulingRound");
}
