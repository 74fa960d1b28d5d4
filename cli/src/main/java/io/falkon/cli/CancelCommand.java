package io.falkon.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

@Command(name = "cancel", mixinStandardHelpOptions = true,
        description = "Cancel a detached instance: its unfinished tasks are stopped, the instance and its kept "
                + "results are gone. With --task, cancel only those tasks: the instance goes on.")
final class CancelCommand implements Callable<Integer> {

    @Mixin
    InstanceRef instance;

    @Option(names = "--json", description = "print {\"instance\", \"cancelled\"} as JSON")
    boolean json;

    @Option(names = "--task", paramLabel = "N", split = ",", description = "cancel only task N (its number from 1, "
            + "as {#} and falkon results --task number it; repeat it or list them: --task 3,7): each unfinished one "
            + "ends CANCELLED, a running one is killed, the tasks that need it end too; the instance goes on")
    List<Long> tasks;

    @Override
    public Integer call() throws Exception {
        Logging.level("WARN");
        InstanceRecords.Record r = instance.record();
        if (tasks != null) {
            return cancelTasks(r);
        }
        String id;
        long unfinished;
        try (Takeover t = new Takeover(instance.connect(), r.key(), false)) {
            id = Long.toUnsignedString(t.instance().id(), 16);
            JsonNode s = t.status();
            unfinished = Takeover.unfinished(s);
            t.cancel();
        }
        InstanceRecords.standard().cancelled(id);
        if (json) {
            ObjectNode o = new ObjectMapper().createObjectNode();
            o.put("instance", id);
            o.put("cancelled", unfinished);
            System.out.println(o);
        } else {
            System.out.println("instance " + id + " cancelled: " + unfinished + " unfinished task(s) stopped");
        }
        return 0;
    }

    /** --task: the tasks named, by their numbers, and nothing else. */
    private int cancelTasks(InstanceRecords.Record r) throws Exception {
        long[] ids = new long[tasks.size()];
        for (int i = 0; i < ids.length; i++) {
            long n = tasks.get(i);
            if (n < 1 || (r.tasks() > 0 && n > r.tasks())) {
                throw new Falkon.UserError("--task " + n + ": the instance's tasks are numbered 1.." + r.tasks());
            }
            ids[i] = n - 1; // the id its client gave it: its place in the submission, from 0
        }
        String id;
        int cancelled;
        try (Takeover t = new Takeover(instance.connect(), r.key(), false)) {
            id = Long.toUnsignedString(t.instance().id(), 16);
            cancelled = t.instance().cancelTasks(ids);
        }
        String named = tasks.stream().map(String::valueOf).collect(Collectors.joining(", "));
        if (json) {
            ObjectNode o = new ObjectMapper().createObjectNode();
            o.put("instance", id);
            o.put("cancelled", cancelled);
            tasks.forEach(o.putArray("tasks")::add);
            System.out.println(o);
        } else {
            System.out.println("instance " + id + ": " + cancelled + " of " + (tasks.size() == 1 ? "task " : "tasks ")
                    + named + " cancelled (" + (tasks.size() - cancelled == 0 ? "all unfinished"
                    : (tasks.size() - cancelled) + " had finished already") + "); the instance goes on");
        }
        return 0;
    }
}
