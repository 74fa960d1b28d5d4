package io.falkon.cli;

import io.falkon.client.MessageConnection;
import io.falkon.client.ResultSink;
import io.falkon.dispatcher.core.LatencyHistogram;
import io.falkon.dispatcher.core.StatusSnapshot;
import io.falkon.transport.tcp.TcpConnection;
import io.falkon.transport.ws.WsConnection;
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
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * Every architecture rule of the project, in one place: this module's tests see every other module
 * (docs/architecture.md). The walls between modules are the build's: the core
 * ({@code dispatcher-core}) cannot see a transport, no transport module sees another, and the client
 * API sees no transport (they are found with a ServiceLoader). What a module could still do and must
 * not is here: no two packages depend on each other (none waived); the core and the policies do no
 * I/O (Netty reaches them through the protocol module); transports reach the scheduler only through
 * the admission stage (they implement its {@code Link}); the monitor reads snapshots only; a policy
 * sees only its own interfaces; clients reach a transport's client end only through
 * {@code FalkonClient.connect}, and the client's transport interface is implemented only by the
 * transports; the protocol's Netty, SOAP and session packages stay with the wires. ({@code CoreOwnershipTest}, inside the core's module, says which part of the core
 * writes which field: it reads that module's package-private classes.)
 */
@AnalyzeClasses(packages = "io.falkon", importOptions = {ImportOption.DoNotIncludeTests.class, NoTestJars.class})
class ArchitectureTest {

    @ArchTest
    static final ArchRule noPackageCycles = slices().matching("io.falkon.(**)").should().beFreeOfCycles();

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
            .that().resideInAnyPackage("..transport.tcp..", "..transport.ws..", "..transport.inprocess..",
                    "..transport.pipe..")
            .should().dependOnClassesThat(resideInAPackage("..dispatcher.core..")
                    .and(not(simpleName("Link").or(simpleName("BufferedLink")))))
            .because("authentication and limits live in one place, the admission stage: a transport hands it "
                    + "messages and never reaches the scheduler itself");

    @ArchTest
    static final ArchRule theMonitorReadsSnapshotsOnly = noClasses().that().resideInAPackage("..transport.monitor..")
            .should().dependOnClassesThat(resideInAPackage("..dispatcher.core..")
                    .and(not(belongToAnyOf(StatusSnapshot.class, LatencyHistogram.class))))
            .because("the dashboard and /metrics are built from immutable snapshots the scheduler hands out, and "
                    + "authenticate through the admission stage like every listener");

    @ArchTest
    static final ArchRule policiesSeeOnlyTheirInterfaces = noClasses().that().resideInAPackage("..dispatcher.policy..")
            .should().dependOnClassesThat().resideInAPackage("..dispatcher.core..")
            .because("a policy sees the queue and executors only through SchedulingRound");

    @ArchTest
    static final ArchRule clientsReachTransportsThroughTheApi = noClasses()
            .that().resideOutsideOfPackages("io.falkon.transport..", "io.falkon.bench..")
            .should().dependOnClassesThat(belongToAnyOf(TcpConnection.class, WsConnection.class))
            .because("FalkonClient.connect picks the transport for an address; a client that named one would "
                    + "tie itself to it (the benchmarks measure them directly)");

    @ArchTest
    static final ArchRule theWiresMachineryStaysWithTheWires = noClasses()
            .that().resideOutsideOfPackages("io.falkon.protocol..", "io.falkon.transport..", "io.falkon.executor..")
            .and(not(belongToAnyOf(MessageConnection.class)))
            .should().dependOnClassesThat().resideInAnyPackage("io.falkon.protocol.netty..",
                    "io.falkon.protocol.soap..", "io.falkon.protocol.session..")
            .because("the protocol module's public surface for everyone else is its messages, task specs, statuses, "
                    + "error codes, tokens, TLS and clock; its Netty framing, SOAP mapping and peer session belong to "
                    + "the transports and the executors (and the client's MessageConnection matches replies with its "
                    + "session's Requests)");

    @ArchTest
    static final ArchRule onlyTransportsImplementTheClientsWire = noClasses()
            .that().resideOutsideOfPackages("io.falkon.client", "io.falkon.transport..")
            .should().dependOnClassesThat(belongToAnyOf(MessageConnection.class, ResultSink.class))
            .because("the client's public surface is FalkonClient, Instance, DistributedClient and their "
                    + "options and results; how a message connection works is the transports' business");
}
