package io.falkon.dispatcher;

import io.falkon.dispatcher.core.LatencyHistogram;
import io.falkon.dispatcher.core.StatusSnapshot;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.simpleName;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The dispatcher's layering: the scheduler core and the policies do no I/O and know no transport;
 * transports reach the scheduler only through the admission stage (they implement its {@code Link}).
 */
@AnalyzeClasses(packages = "io.falkon.dispatcher", importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {

    @ArchTest
    static final ArchRule coreAndPoliciesDoNoNetworking = noClasses()
            .that().resideInAnyPackage("..dispatcher.core..", "..dispatcher.policy..")
            .should().dependOnClassesThat().resideInAnyPackage("io.netty..", "java.net..", "java.nio.channels..",
                    "org.apache.axis2..", "org.apache.axiom..")
            .because("the scheduler owns its state on one thread and does no I/O");

    @ArchTest
    static final ArchRule coreKnowsNoTransport = noClasses().that().resideInAPackage("..dispatcher.core..")
            .should().dependOnClassesThat().resideInAnyPackage("..dispatcher.transport..", "..dispatcher.ws..");

    @ArchTest
    static final ArchRule transportsAreIndependent = noClasses().that().resideInAPackage("..dispatcher.ws..")
            .should().dependOnClassesThat().resideInAPackage("..dispatcher.transport..")
            .because("the TCP and WS transports each talk to the scheduler only");

    @ArchTest
    static final ArchRule transportsGoThroughAdmission = noClasses()
            .that().resideInAnyPackage("..dispatcher.transport..", "..dispatcher.ws..")
            .should().dependOnClassesThat(resideInAPackage("..dispatcher.core..")
                    .and(not(simpleName("Link").or(simpleName("BufferedLink")))))
            .because("authentication and limits live in one place, the admission stage: a transport hands it "
                    + "messages and never reaches the scheduler itself");

    @ArchTest
    static final ArchRule theMonitorReadsSnapshotsOnly = noClasses().that().resideInAPackage("..dispatcher.monitor..")
            .should().dependOnClassesThat(resideInAnyPackage("..dispatcher.transport..", "..dispatcher.ws..")
                    .or(resideInAPackage("..dispatcher.core..")
                            .and(not(belongToAnyOf(StatusSnapshot.class, LatencyHistogram.class)))))
            .because("the dashboard and /metrics are built from immutable snapshots the scheduler hands out, and "
                    + "authenticate through the admission stage like every listener");

    @ArchTest
    static final ArchRule policiesSeeOnlyTheirInterfaces = noClasses().that().resideInAPackage("..dispatcher.policy..")
            .should().dependOnClassesThat().resideInAPackage("..dispatcher.core..")
            .because("a policy sees the queue and executors only through SchedulingRound");
}
