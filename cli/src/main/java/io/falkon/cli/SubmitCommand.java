package io.falkon.cli;

import io.falkon.client.FalkonClient;
import io.falkon.executor.ConnectOptions;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

import java.util.concurrent.Callable;

@Command(name = "submit", mixinStandardHelpOptions = true,
        description = "Run a task file on a running dispatcher; exit 0 iff every task succeeded.")
final class SubmitCommand implements Callable<Integer> {

    @ArgGroup(exclusive = true, multiplicity = "1")
    DispatcherAddress target;

    @Mixin
    ConnectOptions connect = new ConnectOptions();

    @Mixin
    WorkloadOptions workload;

    @Override
    public Integer call() throws Exception {
        Logging.level("WARN");
        long total = workload.validate();
        try (FalkonClient client = FalkonClient.connect(target.address(), workload.clientOptions(connect));
             TaskFile file = TaskFile.open(workload.file, workload.format())) {
            return workload.report(new Workload().run(client, file, total, workload));
        }
    }
}
