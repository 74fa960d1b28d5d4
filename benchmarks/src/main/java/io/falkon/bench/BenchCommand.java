package io.falkon.bench;

import io.falkon.bench.report.ReportCommand;
import picocli.CommandLine.Command;

/** {@code falkon bench WORKLOAD}: the papers' workloads. Each prints a table and writes CSV and JSON. */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Benchmarks: reproduce the papers' figures on this machine.",
        subcommands = {ThroughputBenchmark.class, QueueBenchmark.class, JournalBenchmark.class, ChaosBenchmark.class,
                SchedulerBenchmark.class, MonotonicBenchmark.class, AllPairsBenchmark.class,
                WsBenchmark.class, ProvisioningBenchmark.class, TlsBenchmark.class, BundlingBenchmark.class, EfficiencyBenchmark.class,
                ScaleBenchmark.class, DistributedBenchmark.class, LatencyBenchmark.class, EnduranceBenchmark.class, LatticeBenchmark.class,
                ReportCommand.class})
public final class BenchCommand {
}
