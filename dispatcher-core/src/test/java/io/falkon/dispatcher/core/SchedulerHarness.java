package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.DispatchPolicy;
import io.falkon.protocol.Execution;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskInput;
import io.falkon.protocol.TaskSpec;
import io.falkon.protocol.TaskSpecCodec;
import io.falkon.protocol.TaskStatus;
import io.falkon.protocol.time.FakeClock;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Drives a {@link Scheduler} the way the transport does, with fake links and a fake clock. The
 * scheduler's invariants are checked after every event the harness sends and at the end of every
 * batch (whoever ends it), so a test that never looks at a counter still fails when one drifts.
 */
public final class SchedulerHarness {
    public final FakeClock clock = new FakeClock(1_000_000_000L);
    public final Scheduler scheduler;
    /** The instance rows the scheduler had rendered for STATUS requests, in order. */
    public final List<StatusSnapshot.InstanceRow> renderedRows = new ArrayList<>();
    private long requestIds = 1;
    private long clientTaskIds;

    public SchedulerHarness(DispatchPolicy policy) {
        this(policy, SchedulerConfig.defaults(), Journal.NONE);
    }

    public SchedulerHarness(DispatchPolicy policy, SchedulerConfig config, Journal journal) {
        this(policy, config, journal, ResultSpill.NONE);
    }

    public SchedulerHarness(DispatchPolicy policy, SchedulerConfig config, Journal journal, ResultSpill spill) {
        Scheduler[] self = new Scheduler[1];
        StatusRenderer renderer = new StatusRenderer() {
            @Override
            public String dispatcher(StatusSnapshot snapshot) {
                return RECORDS.dispatcher(snapshot);
            }

            @Override
            public String instance(StatusSnapshot.InstanceRow row) {
                renderedRows.add(row);
                return RECORDS.instance(row);
            }
        };
        this.scheduler = new Scheduler(policy, clock, "d-test", config, new CheckingJournal(journal, () -> self[0]),
                spill, renderer);
        self[0] = scheduler;
    }

    /** Checks the invariants whenever a batch commits: at the end of every batch. */
    private record CheckingJournal(Journal inner, Supplier<Scheduler> scheduler) implements Journal {
        @Override
        public void instanceCreated(InstanceRecord instance) {
            inner.instanceCreated(instance);
        }

        @Override
        public void accepted(long instanceId, long clientTaskId, long submittedMicros, byte[] spec) {
            inner.accepted(instanceId, clientTaskId, submittedMicros, spec);
        }

        @Override
        public void completed(long instanceId, Message.DeliveredResult result) {
            inner.completed(instanceId, result);
        }

        @Override
        public void acked(long instanceId, long upToSeq) {
            inner.acked(instanceId, upToSeq);
        }

            @Override
            public void produced(long instanceId, String[] objectIds, String name, boolean ok, long failedProducer) {
                inner.produced(instanceId, objectIds, name, ok, failedProducer);
            }

        @Override
        public void destroyed(long instanceId) {
            inner.destroyed(instanceId);
        }

        @Override
        public void commit(Runnable send) {
            scheduler.get().checkInvariants();
            inner.commit(send);
        }

        @Override
        public boolean wantsCompaction() {
            return inner.wantsCompaction();
        }

        @Override
        public void compact(Consumer<Journal> snapshot) {
            inner.compact(snapshot);
        }
    }

    public FakeLink executor(String id, int slots, int credits) {
        return executor(id, slots, credits, -1);
    }

    /** An executor advertising {@code memoryMiB} for tasks (none when negative). */
    public FakeLink executor(String id, int slots, int credits, long memoryMiB) {
        return executor(id, slots, credits, memoryMiB, -1);
    }

    /** An executor advertising {@code memoryMiB} and {@code diskMiB} for tasks (each none when negative). */
    public FakeLink executor(String id, int slots, int credits, long memoryMiB, long diskMiB) {
        return executor(id, slots, credits, memoryMiB, diskMiB, null);
    }

    /** An executor offering named resources ({@code gpus=4,license=2}: its {@code resources} attribute). */
    public FakeLink executor(String id, int slots, int credits, String resources) {
        return executor(id, slots, credits, -1, -1, resources);
    }

    private FakeLink executor(String id, int slots, int credits, long memoryMiB, long diskMiB, String resources) {
        FakeLink link = new FakeLink(id);
        // every fake executor has a cache server, at a port derived from its id
        Map<String, String> attrs = new java.util.HashMap<>();
        attrs.put("cachePort", Integer.toString(40000 + Math.abs(id.hashCode() % 20000)));
        if (memoryMiB >= 0) {
            attrs.put("memoryMiB", Long.toString(memoryMiB));
        }
        if (diskMiB >= 0) {
            attrs.put("diskMiB", Long.toString(diskMiB));
        }
        if (resources != null) {
            attrs.put("resources", resources);
        }
        scheduler.handle(Event.executor(link, new Message.Register(id, "host-" + id, slots, 0, attrs)));
        if (credits > 0) {
            scheduler.handle(Event.executor(link, new Message.Credit(credits)));
        }
        scheduler.endBatch();
        return link;
    }

    /** A connected client with one instance; returns the link, the instance id is {@link #instanceOf}. */
    public FakeLink client(String name) {
        return client(name, 0);
    }

    /** A client whose instance outlives its connection by {@code leaseSeconds}. */
    public FakeLink client(String name, long leaseSeconds) {
        FakeLink link = new FakeLink(name);
        scheduler.handle(Event.client(link, new Message.CreateInstance(requestIds++, name, leaseSeconds)));
        scheduler.endBatch();
        return link;
    }

    public long instanceOf(FakeLink client) {
        return client.sent(Message.InstanceCreated.class).get(0).instanceId();
    }

    /** The secret that, with the id, takes the client's instance over. */
    public String secretOf(FakeLink client) {
        return client.sent(Message.InstanceCreated.class).get(0).secret();
    }

    public List<Long> submit(FakeLink client, int n) {
        return submit(client, instanceOf(client), n);
    }

    public List<Long> submit(FakeLink client, long instanceId, int n) {
        return submit(client, instanceId, n, TaskSpec.of("/bin/true"));
    }

    public List<Long> submit(FakeLink client, int n, TaskSpec spec) {
        return submit(client, instanceOf(client), n, spec);
    }

    /** Submits like the transport does: scanning every spec first. */
    public List<Long> submit(FakeLink client, long instanceId, int n, TaskSpec spec) {
        List<Message.SubmittedTask> tasks = new ArrayList<>();
        List<Long> ids = new ArrayList<>();
        byte[] encoded = TaskSpecCodec.encode(spec);
        TaskSpecCodec.Scan[] scans = new TaskSpecCodec.Scan[n];
        for (int i = 0; i < n; i++) {
            long id = clientTaskIds++;
            ids.add(id);
            tasks.add(new Message.SubmittedTask(id, encoded));
            scans[i] = TaskSpecCodec.scan(encoded);
        }
        scheduler.handle(Event.submit(client, new Message.Submit(requestIds++, instanceId, tasks), scans));
        scheduler.endBatch();
        return ids;
    }

    /** Numbers the next tasks after {@code highest}, as a client that took an instance over does. */
    public void continueAfter(long highest) {
        clientTaskIds = highest + 1;
    }

    /** Submits these tasks as one bundle, as the transport does; returns their client task ids. */
    public List<Long> submitAll(FakeLink client, List<TaskSpec> specs) {
        return submitAll(client, instanceOf(client), specs);
    }

    public List<Long> submitAll(FakeLink client, long instanceId, List<TaskSpec> specs) {
        List<Message.SubmittedTask> tasks = new ArrayList<>();
        List<Long> ids = new ArrayList<>();
        TaskSpecCodec.Scan[] scans = new TaskSpecCodec.Scan[specs.size()];
        for (int i = 0; i < specs.size(); i++) {
            byte[] encoded = TaskSpecCodec.encode(specs.get(i));
            long id = clientTaskIds++;
            ids.add(id);
            tasks.add(new Message.SubmittedTask(id, encoded));
            scans[i] = TaskSpecCodec.scan(encoded);
        }
        scheduler.handle(Event.submit(client, new Message.Submit(requestIds++, instanceId, tasks), scans));
        scheduler.endBatch();
        return ids;
    }

    /** The name a dispatched task's spec carries (its NAME), or its command. */
    public static String nameOf(Message.DispatchedTask t) {
        TaskSpec s = TaskSpecCodec.decode(t.spec());
        return s.name() != null ? s.name() : s.argv().get(0);
    }

    /** The executor reports that its cache now holds these objects (1 MiB each). */
    public void cached(FakeLink executor, String... ids) {
        List<Message.CachedObject> added = new ArrayList<>();
        for (String id : ids) {
            added.add(new Message.CachedObject(id, 1 << 20));
        }
        scheduler.handle(Event.executor(executor, new Message.CacheUpdate(false, added, List.of())));
    }

    public void evicted(FakeLink executor, String... ids) {
        scheduler.handle(Event.executor(executor, new Message.CacheUpdate(false, List.of(), List.of(ids))));
    }

    /** A task reading the given objects (1 MiB each). */
    public static TaskSpec reading(String... ids) {
        List<TaskInput> inputs = new ArrayList<>();
        for (String id : ids) {
            inputs.add(new TaskInput(id, "store/" + id, 1 << 20, "", 0, ""));
        }
        return TaskSpec.builder("/bin/true").inputs(inputs).build();
    }

    /** The slots a dispatched task takes: its spec's cores. */
    public static int coresOf(Message.DispatchedTask t) {
        return TaskSpecCodec.scan(t.spec()).cores();
    }

    private static int credits(List<Message.DispatchedTask> tasks) {
        return tasks.stream().mapToInt(SchedulerHarness::coresOf).sum();
    }

    /** The executor reports these tasks finished with {@code x} and returns their credits (one per core). */
    public void finish(FakeLink executor, List<Message.DispatchedTask> tasks, Execution x) {
        List<Message.TaskResult> results = new ArrayList<>();
        for (Message.DispatchedTask t : tasks) {
            results.add(new Message.TaskResult(t.taskId(), t.attempt(), x));
        }
        scheduler.handle(Event.executor(executor, new Message.Result(credits(tasks), results)));
        scheduler.endBatch();
    }

    /** Everything the executor was sent in DISPATCH bundles since the last call. */
    public static List<Message.DispatchedTask> dispatched(FakeLink executor) {
        List<Message.DispatchedTask> out = new ArrayList<>();
        for (Message m : executor.drain()) {
            if (m instanceof Message.Dispatch d) {
                out.addAll(d.tasks());
            }
        }
        return out;
    }

    public static Execution exited(int code) {
        return new Execution(TaskStatus.EXITED, code, 0, 1, 2, new byte[0], new byte[0], "", ExtField.NONE);
    }

    /** The executor reports these tasks finished with exit 0 and returns their credits (one per core). */
    public void complete(FakeLink executor, List<Message.DispatchedTask> tasks) {
        List<Message.TaskResult> results = new ArrayList<>();
        for (Message.DispatchedTask t : tasks) {
            results.add(new Message.TaskResult(t.taskId(), t.attempt(), exited(0)));
        }
        scheduler.handle(Event.executor(executor, new Message.Result(credits(tasks), results)));
        scheduler.endBatch();
    }

    public static List<Message.DeliveredResult> delivered(FakeLink client) {
        List<Message.DeliveredResult> out = new ArrayList<>();
        for (Message m : client.sent) {
            if (m instanceof Message.Deliver d) {
                out.addAll(d.results());
            }
        }
        return out;
    }
}
