package io.falkon.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.falkon.executor.ConnectOptions;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;

@Command(name = "status", mixinStandardHelpOptions = true, description = "Show a dispatcher's state.")
final class StatusCommand implements Callable<Integer> {

    @ArgGroup(exclusive = true, multiplicity = "1")
    DispatcherAddress target;

    @Option(names = "--json", description = "print the raw status document")
    boolean json;

    @Mixin
    ConnectOptions connect = new ConnectOptions();

    @Override
    public Integer call() throws Exception {
        Logging.level("WARN");
        String doc = DispatcherAddress.status(target.address(), connect);
        if (json) {
            System.out.println(doc);
            return 0;
        }
        JsonNode s = JsonTree.read(doc);
        if (s.has("dispatcherList")) {
            printDistributed(s);
            return 0;
        }
        System.out.printf("dispatcher %s  up %.0f s  policy %s%n", s.path("dispatcherId").asText(),
                s.path("uptimeSeconds").asDouble(), s.path("policy").asText());
        long instances = s.path("instances").asLong();
        System.out.printf("tasks: %d queued, %d waiting for others, %d running, %d completed (%d failed%s); "
                        + "%d instance%s%n", s.path("queued").asLong(), s.path("waiting").asLong(),
                s.path("running").asLong(), s.path("completed").asLong(), s.path("failed").asLong(), cancelled(s),
                instances, instances == 1 ? "" : "s");
        JsonNode ex = s.path("executors");
        System.out.printf("executors: %d registered, %d/%d slots busy%n", ex.path("registered").asInt(),
                ex.path("busySlots").asInt(), ex.path("slots").asInt());
        if (!s.path("executorList").isEmpty()) {
            System.out.printf("  %-32s %-20s %-4s %9s %9s %8s  %s%n", "EXECUTOR", "HOST", "IMPL", "BUSY", "DONE",
                    "FAILURES", "STATE");
        }
        for (JsonNode e : s.path("executorList")) {
            StringBuilder state = new StringBuilder(e.path("state").asText());
            state.append(e.path("noExec").asBoolean() ? " (no-exec)" : "");
            // named resources, held of offered: "gpus 1/4"
            e.path("resources").properties().forEach(r -> state.append(String.format(", %s %d/%d", r.getKey(),
                    r.getValue().path("inUse").asLong(), r.getValue().path("offered").asLong())));
            System.out.printf("  %-32s %-20s %-4s %4d/%-4d %9d %8d  %s%n", e.path("id").asText(),
                    e.path("host").asText(), e.path("impl").asText(), e.path("running").asInt(), e.path("slots").asInt(),
                    e.path("completed").asLong(), e.path("failures").asLong(), state);
        }
        JsonNode prov = s.path("provisioner");
        if (!prov.isMissingNode()) {
            System.out.printf("provisioner: %s, %s acquisition, %s release, %d node(s) active%s%n",
                    prov.path("lrm").asText(), prov.path("acquisition").asText(), prov.path("release").asText(),
                    prov.path("activeNodes").asInt(), prov.path("lastError").asText().isEmpty() ? ""
                            : "; last error: " + prov.path("lastError").asText());
            if (!prov.path("allocations").isEmpty()) {
                System.out.printf("  %-24s %-14s %8s %-10s %s%n", "ALLOCATION", "JOB", "NODES", "STAGE",
                        "SECONDS AFTER START");
            }
            for (JsonNode a : prov.path("allocations")) {
                StringBuilder times = new StringBuilder();
                a.path("secondsAfterStart").properties().forEach(f ->
                        times.append(String.format(" %s %.1fs", f.getKey(), f.getValue().asDouble())));
                System.out.printf("  %-24s %-14s %8d %-10s%s%n", a.path("name").asText(),
                        a.path("jobId").asText(), a.path("nodes").asInt(), a.path("stage").asText(), times);
            }
        }
        return 0;
    }

    /** ", N cancelled" when some were, for the completed count's parentheses. */
    private static String cancelled(JsonNode s) {
        long n = s.path("cancelled").asLong();
        return n == 0 ? "" : ", " + n + " cancelled";
    }

    /** Several dispatchers: their sums, then one line each. */
    private static void printDistributed(JsonNode s) {
        System.out.printf("%d dispatchers: %d queued, %d running, %d completed (%d failed%s); %d executors, %d slots%n",
                s.path("dispatchers").asInt(), s.path("queued").asLong(), s.path("running").asLong(),
                s.path("completed").asLong(), s.path("failed").asLong(), cancelled(s),
                s.path("executors").path("registered").asLong(), s.path("executors").path("slots").asLong());
        for (JsonNode d : s.path("dispatcherList")) {
            JsonNode st = d.path("status");
            if (!d.path("reachable").asBoolean()) {
                System.out.printf("  %-24s unreachable%n", d.path("address").asText());
                continue;
            }
            System.out.printf("  %-24s %-12s %6d queued %6d running %9d completed  %4d executors %5d slots%n",
                    d.path("address").asText(), st.path("dispatcherId").asText(), st.path("queued").asLong(),
                    st.path("running").asLong(), st.path("completed").asLong(),
                    st.path("executors").path("registered").asInt(), st.path("executors").path("slots").asInt());
        }
    }
}
