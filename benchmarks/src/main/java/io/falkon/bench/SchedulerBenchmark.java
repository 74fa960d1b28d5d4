package io.falkon.bench;

import io.falkon.dispatcher.core.Event;
import io.falkon.dispatcher.core.Journal;
import io.falkon.dispatcher.core.Link;
import io.falkon.dispatcher.core.Scheduler;
import io.falkon.dispatcher.core.SchedulerConfig;
import io.falkon.dispatcher.policy.DispatchPolicies;
import io.falkon.protocol.Execution;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskInput;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskSpecCodec;
import io.falkon.protocol.TaskStatus;
import io.falkon.protocol.time.Clock;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;

/**
 * The data-diffusion report's scheduler micro-benchmark (section 4.3.3.1): tasks each reading one of
 * 10,000 objects chosen uniformly, over 1,000 executors emulated as in-memory links driving the real
 * scheduler core (no network, no encoding: the decisions alone). An executor caches every object
 * it has run a task on. Reports assignments (scheduling decisions) per second for each policy.
 */
@Command(name = "scheduler", mixinStandardHelpOptions = true,
        description = "Scheduling decisions per second per dispatch policy, with emulated executors.")
final class SchedulerBenchmark implements Callable<Integer> {

    @Option(names = "--executors", description = "(default: ${DEFAULT-VALUE})")
    int executors = 1000;

    @Option(names = "--tasks", description = "(default: ${DEFAULT-VALUE})")
    int tasks = 250_000;

    @Option(names = "--objects", description = "objects in the data set (default: ${DEFAULT-VALUE})")
    int objects = 10_000;

    @Option(names = "--policies", split = ",", description = "(default: fa,mch,mcu,gcc)")
    List<String> policies = List.of("fa", "mch", "mcu", "gcc");

    @Option(names = "--seed", description = "(default: ${DEFAULT-VALUE})")
    long seed = 1;

    @Option(names = "--out", description = "directory for CSV and JSON (default: ${DEFAULT-VALUE})")
    Path out = Path.of("bench-results");

    /** A connection that keeps only what the benchmark needs: the dispatches (and an instance id). */
    static final class EmulatedLink implements Link {
        final String name;
        final List<Message.DispatchedTask> received = new ArrayList<>();
        private List<Message> buffered = new ArrayList<>();
        private long instanceId;

        long instanceId() {
            return instanceId;
        }

        EmulatedLink(String name) {
            this.name = name;
        }

        @Override
        public boolean enqueue(Message m) {
            if (m instanceof Message.InstanceCreated c) {
                instanceId = c.instanceId();
            }
            buffered.add(m);
            return buffered.size() == 1;
        }

        @Override
        public Runnable takeFlush() {
            List<Message> out = buffered;
            buffered = new ArrayList<>();
            return () -> {
                for (Message m : out) {
                    if (m instanceof Message.Dispatch d) {
                        received.addAll(d.tasks());
                    }
                }
            };
        }

        @Override
        public void close(Message.ErrorMessage error) {
            throw new IllegalStateException("the scheduler closed " + name + ": " + error);
        }

        @Override
        public String remote() {
            return name;
        }

        @Override
        public String remoteHost() {
            return "127.0.0.1";
        }
    }

    @Override
    public Integer call() {
        ResultTable table = new ResultTable("scheduler: decisions/s with " + executors + " emulated executors, "
                + tasks + " tasks over " + objects + " objects", List.of("policy", "decisions", "seconds",
                "decisionsPerSecond", "toAHolder"));
        Machine.describe(table);
        for (String p : policies) {
            run(p, Math.max(1000, tasks / 10), null); // warm-up
            run(p, tasks, table);
        }
        table.print(System.out);
        try {
            table.write(out, "scheduler");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return 0;
    }

    private void run(String policyName, int n, ResultTable table) {
        Scheduler s = new Scheduler(DispatchPolicies.byName(policyName), Clock.SYSTEM, "bench",
                SchedulerConfig.defaults(), Journal.NONE);
        List<EmulatedLink> links = new ArrayList<>();
        List<Set<String>> caches = new ArrayList<>();
        for (int i = 0; i < executors; i++) {
            EmulatedLink l = new EmulatedLink("e" + i);
            links.add(l);
            caches.add(new HashSet<>());
            s.handle(Event.executor(l, new Message.Register("e" + i, "h", 1, 0, Map.of("cachePort", "1"))));
            s.handle(Event.executor(l, new Message.Credit(1)));
        }
        EmulatedLink client = new EmulatedLink("client");
        s.handle(Event.client(client, new Message.CreateInstance(1, "bench", 0)));
        long instance = client.instanceId();
        Random rnd = new Random(seed);
        byte[][] specs = new byte[objects][];
        for (int o = 0; o < objects; o++) {
            specs[o] = TaskSpecCodec.encode(TaskSpec.builder("/bin/true")
                    .inputs(List.of(new TaskInput("obj-" + o, "obj-" + o, 1, "", 0, ""))).build());
        }
        List<Message.SubmittedTask> bundle = new ArrayList<>();
        TaskSpecCodec.Scan[] scans = new TaskSpecCodec.Scan[n];
        String[] objectOf = new String[n]; // by dispatcher task id - 1: the scheduler numbers tasks from 1
        for (int t = 0; t < n; t++) {
            int o = rnd.nextInt(objects);
            objectOf[t] = "obj-" + o;
            bundle.add(new Message.SubmittedTask(t, specs[o]));
            scans[t] = TaskSpecCodec.scan(specs[o]);
        }
        s.handle(Event.submit(client, new Message.Submit(2, instance, bundle), scans));
        Execution ok = new Execution(TaskStatus.EXITED, 0, 0, 0, 0, new byte[0], new byte[0], "", ExtField.NONE);
        long decisions = 0;
        long hits = 0;
        long t0 = System.nanoTime();
        s.endBatch();
        boolean progress = true;
        while (progress) {
            progress = false;
            for (int i = 0; i < links.size(); i++) {
                EmulatedLink l = links.get(i);
                if (l.received.isEmpty()) {
                    continue;
                }
                progress = true;
                List<Message.TaskResult> results = new ArrayList<>(l.received.size());
                List<Message.CachedObject> added = new ArrayList<>();
                for (Message.DispatchedTask d : l.received) {
                    decisions++;
                    String object = objectOf[(int) d.taskId() - 1];
                    if (!caches.get(i).add(object)) {
                        hits++;
                    } else {
                        added.add(new Message.CachedObject(object, 1));
                    }
                    results.add(new Message.TaskResult(d.taskId(), d.attempt(), ok));
                }
                l.received.clear();
                s.handle(Event.executor(l, new Message.Result(results.size(), results)));
                if (!added.isEmpty()) {
                    s.handle(Event.executor(l, new Message.CacheUpdate(false, added, List.of())));
                }
            }
            s.endBatch();
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        if (decisions != n) {
            throw new IllegalStateException(policyName + ": " + decisions + " of " + n + " tasks dispatched");
        }
        if (table != null) {
            table.add(policyName, decisions, seconds, decisions / seconds, (double) hits / decisions);
            System.err.printf("  %s: %,.0f decisions/s, %.0f%% to an executor caching the input%n", policyName,
                    decisions / seconds, 100.0 * hits / decisions);
        }
    }
}
