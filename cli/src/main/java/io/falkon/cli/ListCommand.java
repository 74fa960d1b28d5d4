package io.falkon.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.executor.ConnectOptions;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.Callable;

@Command(name = "list", mixinStandardHelpOptions = true,
        description = "List the instances on a dispatcher with their progress (those submitted from here are marked *).")
final class ListCommand implements Callable<Integer> {

    @ArgGroup(exclusive = true, multiplicity = "1")
    DispatcherAddress target;

    @Option(names = "--json", description = "print the instances as a JSON array")
    boolean json;

    @Mixin
    ConnectOptions connect = new ConnectOptions();

    @Override
    public Integer call() throws Exception {
        Logging.level("WARN");
        String doc = DispatcherAddress.status(target.address(), connect);
        JsonNode list = new ObjectMapper().readTree(doc).path("instanceList");
        if (json) {
            System.out.println(list);
            return 0;
        }
        if (list.isEmpty()) {
            System.out.println("no instances");
            return 0;
        }
        Set<String> mine = new HashSet<>(InstanceRecords.standard().ids());
        System.out.printf("%-18s %-16s %10s %10s %8s %9s %8s %8s %8s  %s%n", "INSTANCE", "NAME", "TASKS", "DONE",
                "FAILED", "CANCELLED", "QUEUED", "WAITING", "RUNNING", "CLIENT");
        for (JsonNode in : list) {
            String id = in.path("instance").asText();
            long tasks = in.path("highestTaskId").asLong() + 1;
            String client = in.path("attached").asBoolean() ? "attached"
                    : String.format("detached, lease %.0f s left", in.path("leaseLeftSeconds").asDouble());
            System.out.printf("%-18s %-16s %10d %10d %8d %9d %8d %8d %8d  %s%n", id + (mine.contains(id) ? "*" : ""),
                    shorten(in.path("name").asText(), 16), tasks, in.path("completed").asLong(),
                    in.path("failed").asLong(), in.path("cancelled").asLong(), in.path("queued").asLong(),
                    in.path("waiting").asLong(), in.path("running").asLong(), client);
        }
        return 0;
    }

    private static String shorten(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max - 1) + "…";
    }
}
