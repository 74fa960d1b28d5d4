package io.falkon.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;

@Command(name = "cancel", mixinStandardHelpOptions = true,
        description = "Cancel a detached instance: its unfinished tasks are stopped, the instance and its kept "
                + "results are gone.")
final class CancelCommand implements Callable<Integer> {

    @Mixin
    InstanceRef instance;

    @Option(names = "--json", description = "print {\"instance\", \"cancelled\"} as JSON")
    boolean json;

    @Override
    public Integer call() throws Exception {
        Logging.level("WARN");
        InstanceRecords.Record r = instance.record();
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
}
