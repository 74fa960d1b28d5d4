package io.falkon.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The golden vectors: the messages behind {@code src/test/resources/vectors/}. The files are the
 * contract (shared with the C executor); this class only (re)writes them on purpose:
 * {@code ./mvnw -pl protocol test-compile exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=io.falkon.protocol.GoldenVectors -Dexec.args=protocol/src/test/resources/vectors}.
 */
public final class GoldenVectors {

    /** One vector: a file stem, what it shows, and the message. */
    public record Vector(String name, String description, Message message) {
    }

    /** Executor-facing types: the ones every executor implementation must decode and encode. */
    public static final List<MessageType> EXECUTOR_TYPES = List.of(MessageType.HELLO, MessageType.WELCOME,
            MessageType.HEARTBEAT, MessageType.ERROR, MessageType.REGISTER, MessageType.CREDIT,
            MessageType.DISPATCH, MessageType.RESULT, MessageType.CANCEL, MessageType.CACHE_UPDATE,
            MessageType.RELEASE, MessageType.REPLICATE);

    private GoldenVectors() {
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static Execution exec(TaskStatus status, int exit, int flags, long start, long end, String out,
                                  byte[] err, String detail) {
        return new Execution(status, exit, flags, start, end, utf8(out), err, detail, ExtField.NONE);
    }

    public static List<Vector> all() {
        List<Vector> v = new ArrayList<>();
        v.add(new Vector("01_hello_executor", "an executor opens a connection, no token",
                Message.Hello.of(Protocol.ROLE_EXECUTOR, "", "falkon-c/0.1.0")));
        v.add(new Vector("02_hello_client_token", "a client opens a connection with an auth token",
                Message.Hello.of(Protocol.ROLE_CLIENT, "s3cret", "falkon-java/0.1.0")));
        v.add(new Vector("03_welcome", "the dispatcher accepts: heartbeat every 5 s, 16 MiB frames",
                new Message.Welcome(Protocol.VERSION, 5000, Protocol.DEFAULT_MAX_FRAME_LENGTH, "d-7f3a")));
        v.add(new Vector("04_heartbeat", "a heartbeat stamped 2025-11-22T00:00:00Z",
                new Message.Heartbeat(1_763_769_600_000_000L)));
        v.add(new Vector("05_error_protocol", "a protocol error (requestId 0): the connection closes after it",
                Message.ErrorMessage.of(0, ErrorCode.MALFORMED, "DISPATCH.tasks[0].spec: truncated")));
        v.add(new Vector("06_error_request", "a request error answering request 7: the connection stays open",
                Message.ErrorMessage.of(7, ErrorCode.INVALID_TASK, "task 2: argv is empty (a task needs a command)")));
        Map<String, String> attrs = new LinkedHashMap<>();
        attrs.put("impl", "c");
        attrs.put("pid", "4242");
        v.add(new Vector("07_register", "an executor with 4 slots registers",
                new Message.Register("node1-4242", "node1", 4, 0, attrs)));
        v.add(new Vector("08_register_no_exec", "a no-exec (benchmark) executor with 256 slots, no attributes",
                new Message.Register("bench-1", "localhost", 256, Protocol.REGISTER_NO_EXEC, Map.of())));
        v.add(new Vector("09_credit", "the executor offers 4 free slots", new Message.Credit(4)));

        byte[] trueSpec = TaskSpecCodec.encode(TaskSpec.of("/bin/true"));
        v.add(new Vector("10_dispatch_one", "one task, /bin/true, first attempt",
                new Message.Dispatch(List.of(new Message.DispatchedTask(1, 0, trueSpec, ExtField.NONE)))));
        TaskSpec rich = TaskSpec.builder("/usr/bin/env", "héllo ✓", "")
                .env("A", "1").env("PATH_EXTRA", "/opt/x")
                .workDir("/tmp/work").wallTime(Duration.ofMillis(2500)).build();
        TaskSpec withExt = TaskSpec.builder("/bin/echo", "a\tb\"c\\d\n")
                .ext(new ExtField(0x8001, new byte[]{1, 2, (byte) 0xff})).build();
        v.add(new Vector("11_dispatch_bundle",
                "a bundle of three: a shell line; env, workDir, 2.5 s wall time and non-ASCII argv; "
                        + "escapes, an unknown ext tag in the spec and in the dispatch entry, attempt 2, "
                        + "a task id above 2^63",
                new Message.Dispatch(List.of(
                        new Message.DispatchedTask(2, 0, TaskSpecCodec.encode(TaskSpec.shell("echo hi; exit 3")),
                                ExtField.NONE),
                        new Message.DispatchedTask(3, 1, TaskSpecCodec.encode(rich), ExtField.NONE),
                        new Message.DispatchedTask(0x8000_0000_0000_0005L, 2, TaskSpecCodec.encode(withExt),
                                List.of(new ExtField(0x8002, utf8("hint"))))))));
        v.add(new Vector("12_result_exited", "one result, exit 0 with output, returning one credit",
                new Message.Result(1, List.of(new Message.TaskResult(1, 0,
                        exec(TaskStatus.EXITED, 0, 0, 1_763_769_600_000_100L, 1_763_769_600_001_350L, "hello\n",
                                new byte[0], ""))))));
        v.add(new Vector("13_result_bundle",
                "five results with three credits back: exit 1 with stderr; a timeout; a launch failure; "
                        + "both streams truncated with binary bytes; a no-exec completion",
                new Message.Result(3, List.of(
                        new Message.TaskResult(10, 0, exec(TaskStatus.EXITED, 1, 0, 100, 200, "",
                                utf8("oops\n"), "")),
                        new Message.TaskResult(11, 1, exec(TaskStatus.TIMEOUT, -1, 0, 300, 2800, "partial", new byte[0],
                                "wall time 2500 ms exceeded; process tree killed")),
                        new Message.TaskResult(12, 0, exec(TaskStatus.LAUNCH_FAILED, -1, 0, 0, 400, "", new byte[0],
                                "No such file or directory: /no/such/program")),
                        new Message.TaskResult(13, 0, new Execution(TaskStatus.EXITED, 137,
                                Execution.STDOUT_TRUNCATED | Execution.STDERR_TRUNCATED, 500, 600,
                                new byte[]{0, (byte) 0xff, 'x'}, new byte[]{(byte) 0xc3, (byte) 0xa9},
                                "killed by signal 9", ExtField.NONE)),
                        new Message.TaskResult(14, 0, exec(TaskStatus.EXITED, 0, Execution.NO_EXEC, 700, 700, "",
                                new byte[0], ""))))));
        v.add(new Vector("14_result_credit_only", "credits returned with no results (an empty list)",
                new Message.Result(2, List.of())));
        v.add(new Vector("15_cancel", "cancel three running tasks", new Message.Cancel(new long[]{5, 6, 7})));
        v.add(new Vector("16_create_instance", "request 1: create an instance for client 'montage' that outlives "
                + "its connection by 300 s (so the client can re-attach)",
                new Message.CreateInstance(1, "montage", 300)));
        v.add(new Vector("17_instance_created", "reply to request 1",
                new Message.InstanceCreated(1, 0x1234_5678_9abc_def0L, "0f1e2d3c4b5a69788796a5b4c3d2e1f0")));
        v.add(new Vector("18_submit", "request 2: a bundle of two tasks; the second may be retried 5 times",
                new Message.Submit(2, 0x1234_5678_9abc_def0L, List.of(
                        new Message.SubmittedTask(0, TaskSpecCodec.encode(TaskSpec.shell("sleep 0"))),
                        new Message.SubmittedTask(1, TaskSpecCodec.encode(TaskSpec.builder("/bin/true").retries(5)
                                .build()))))));
        v.add(new Vector("19_submitted", "reply to request 2: both accepted",
                new Message.Submitted(2, 0x1234_5678_9abc_def0L, 2)));
        v.add(new Vector("20_deliver", "two results delivered to the client (result sequence numbers 1 and 2); "
                + "the second never ran, after a second attempt",
                new Message.Deliver(0x1234_5678_9abc_def0L, List.of(
                        new Message.DeliveredResult(0, 1, 0, "node1-4242", 1000, 1100, 1500,
                                exec(TaskStatus.EXITED, 0, 0, 1200, 1400, "", new byte[0], "")),
                        new Message.DeliveredResult(1, 2, 1, "", 1000, 0, 1600,
                                Execution.of(TaskStatus.CANCELLED, "instance destroyed", 1600))))));
        v.add(new Vector("21_status_request", "request 3: status of the whole dispatcher",
                new Message.StatusRequest(3, 0)));
        v.add(new Vector("22_status", "reply to request 3",
                new Message.Status(3, "{\"queued\":0,\"running\":2}")));
        v.add(new Vector("23_destroy", "request 4: destroy the instance",
                new Message.Destroy(4, 0x1234_5678_9abc_def0L)));
        v.add(new Vector("24_destroyed", "reply to request 4: nothing was left to cancel",
                new Message.Destroyed(4, 0x1234_5678_9abc_def0L, 0)));
        v.add(new Vector("25_attach", "request 5: re-attach to the instance after reconnecting",
                new Message.Attach(5, 0x1234_5678_9abc_def0L, "0f1e2d3c4b5a69788796a5b4c3d2e1f0")));
        v.add(new Vector("26_attached", "reply to request 5: tasks up to client id 1 were accepted; "
                + "one unacknowledged result follows",
                new Message.Attached(5, 0x1234_5678_9abc_def0L, 1, 1)));
        v.add(new Vector("27_ack", "the client has every result up to sequence number 2",
                new Message.Ack(0x1234_5678_9abc_def0L, 2)));
        v.add(new Vector("28_result_rejected", "an executor refuses a task (it is shutting down); "
                + "the credit comes back and the dispatcher retries the task elsewhere",
                new Message.Result(1, List.of(new Message.TaskResult(15, 0,
                        Execution.of(TaskStatus.REJECTED, "executor shutting down", 900))))));
        v.add(new Vector("29_cache_update", "the executor's cache gained two objects and lost one since its last update",
                new Message.CacheUpdate(false, List.of(new Message.CachedObject("mosaic/tile-0001.fits", 10_485_760L),
                        new Message.CachedObject("mosaic/tile-0002.fits", 10_485_760L)), List.of("mosaic/tile-0000.fits"))));
        v.add(new Vector("30_cache_update_full", "the periodic full summary: the complete contents, nothing removed",
                new Message.CacheUpdate(true, List.of(new Message.CachedObject("a", 1),
                        new Message.CachedObject("b", 22)), List.of())));
        TaskSpec dataTask = TaskSpec.builder("/bin/sh", "-c", "wc -c tile.fits > count.txt")
                .inputs(List.of(new TaskInput("mosaic/tile-0001.fits", "mosaic/tile-0001.fits", 10_485_760L,
                                "sha256:" + "ab".repeat(32), TaskInput.AS_STORED, "tile.fits"),
                        new TaskInput("refs/catalog.tar.gz", "http://store.example/catalog.tar.gz", -1, "",
                                TaskInput.GUNZIP_UNTAR, "catalog")))
                .outputs(List.of(new TaskOutput("count.txt", "counts/tile-0001"))).build();
        Map<String, List<String>> hints = new LinkedHashMap<>();
        hints.put("mosaic/tile-0001.fits", List.of("10.0.0.7:41000", "10.0.0.9:41000"));
        v.add(new Vector("31_dispatch_data_task", "a task with two inputs (the second fetched over http and "
                + "unpacked into a directory) and one output, dispatched with hints naming two peers that cache "
                + "the first input",
                new Message.Dispatch(List.of(new Message.DispatchedTask(40, 0, TaskSpecCodec.encode(dataTask),
                        List.of(new ExtField(ExtTags.HINTS, DataCodec.encodeHints(hints))))))));
        v.add(new Vector("32_result_data_stats", "a result that says where its inputs came from: one local hit, "
                + "one read from the shared store",
                new Message.Result(1, List.of(new Message.TaskResult(40, 0, new Execution(TaskStatus.EXITED, 0, 0,
                        1000, 2000, utf8("10485760 tile.fits\n"), new byte[0], "", List.of(new ExtField(
                        // the form before bytesWritten was added (40 bytes): still read
                        ExtTags.DATA_STATS, java.util.Arrays.copyOf(DataCodec.encodeStats(
                                new DataStats(1, 0, 1, 10_485_760L, 0, 4096)), 40)))))))));
        v.add(new Vector("33_dispatch_bypass_cache", "first-available: read inputs from the shared store, cache "
                + "nothing",
                new Message.Dispatch(List.of(new Message.DispatchedTask(41, 0, TaskSpecCodec.encode(dataTask),
                        List.of(new ExtField(ExtTags.BYPASS_CACHE, new byte[]{1})))))));
        v.add(new Vector("34_halt", "request 8: start nothing more of the instance (falkon run --halt soon)",
                new Message.Halt(8, 0x1234_5678_9abc_def0L)));
        v.add(new Vector("35_halted", "reply to request 8: 17 tasks not yet dispatched were cancelled",
                new Message.Halted(8, 0x1234_5678_9abc_def0L, 17)));
        TaskSpec workflowTask = TaskSpec.builder("mDiff", "p1.fits", "p2.fits", "d12.fits", "region.hdr")
                .name("diff-1-2").after("header").retriesOnFailure(2)
                .ext(new ExtField(ExtTags.SHELL_LINE, utf8("mDiff p1.fits p2.fits d12.fits region.hdr")))
                .outputs(List.of(new TaskOutput("d12.fits", "diffs/d12.fits"))).build();
        v.add(new Vector("36_dispatch_workflow_task", "a task of a workflow: its name, the task it runs after, "
                + "two retries after failures of its own, the shell line it was split from, one output; executors "
                + "ignore what is the dispatcher's",
                new Message.Dispatch(List.of(new Message.DispatchedTask(42, 1, TaskSpecCodec.encode(workflowTask),
                        ExtField.NONE)))));
        v.add(new Vector("37_deliver_dependency_failed", "a task that never ran: the task that produces its input "
                + "(client task id 3) failed",
                new Message.Deliver(0x1234_5678_9abc_def0L, List.of(new Message.DeliveredResult(9, 0, 0, "", 1000, 0,
                        1500, new Execution(TaskStatus.DEPENDENCY_FAILED, -1, 0, 1500, 1500, new byte[0], new byte[0],
                        "not run: it needs its input 'diffs/d12.fits', and task 3 did not succeed", List.of(new ExtField(
                        ExtTags.DEPENDENCY, DataCodec.encodeDependency(new DataCodec.Dependency(3,
                        "diffs/d12.fits"))))))))));
        v.add(new Vector("38_result_data_stats_written", "a result whose inputs came from a peer and the store "
                + "(one stale cached copy fetched again) and whose outputs wrote 2 MiB to the store",
                new Message.Result(1, List.of(new Message.TaskResult(41, 0, new Execution(TaskStatus.EXITED, 0, 0,
                        1000, 2000, new byte[0], new byte[0], "", List.of(new ExtField(ExtTags.DATA_STATS,
                        DataCodec.encodeStats(new DataStats(0, 1, 1, 0, 65_536, 4096, 1, 2_097_152L))))))))));
        v.add(new Vector("39_submit_priority", "request 9: an urgent task (priority 10) and one that may wait "
                + "behind everything else (priority -1)",
                new Message.Submit(9, 0x1234_5678_9abc_def0L, List.of(
                        new Message.SubmittedTask(20, TaskSpecCodec.encode(TaskSpec.builder("/bin/true").priority(10)
                                .build())),
                        new Message.SubmittedTask(21, TaskSpecCodec.encode(TaskSpec.builder("/bin/true").priority(-1)
                                .build()))))));
        v.add(new Vector("40_dispatch_resources", "a task that takes 4 slots at once and states 2048 MiB "
                + "(xz with 4 threads); the executor runs it on 4 slots, on 4 CPUs of its own when its slots are pinned",
                new Message.Dispatch(List.of(new Message.DispatchedTask(43, 0, TaskSpecCodec.encode(
                        TaskSpec.builder("xz", "-T4", "-k", "big.tar").resources(4, 2048).build()), ExtField.NONE)))));
        v.add(new Vector("41_result_cores_credits", "the result of the 4-core task of vector 40 returns 4 credits",
                new Message.Result(4, List.of(new Message.TaskResult(43, 0, new Execution(TaskStatus.EXITED, 0, 0,
                        1000, 9000, new byte[0], new byte[0], "", ExtField.NONE))))));
        v.add(new Vector("42_dispatch_worker", "a task for a persistent worker: a Python worker started once per "
                + "slot gets the argv, and the payload (a pickled call) with it; no process is started for the task",
                new Message.Dispatch(List.of(new Message.DispatchedTask(44, 0, TaskSpecCodec.encode(
                        TaskSpec.builder("call", "/scratch/44.out").worker(List.of("python3", "-m",
                                "falkon.parsl.worker", "resident"), new byte[]{(byte) 0x80, 4, 'K', '.'}).build()),
                        ExtField.NONE)))));
        v.add(new Vector("43_dispatch_temporary_outputs", "a Montage projection whose projected image and area "
                + "file are intermediates (outputs 0 and 1: held by the executor, never written to the store) and "
                + "whose log is saved as usual",
                new Message.Dispatch(List.of(new Message.DispatchedTask(45, 0, TaskSpecCodec.encode(
                        TaskSpec.builder("mProjectPP", "raw.fits", "p.fits", "region.hdr").outputs(List.of(
                                new TaskOutput("p.fits", "proj/p1.fits", true),
                                new TaskOutput("p_area.fits", "proj/p1_area.fits", true),
                                new TaskOutput("log", "logs/p1.log"))).build()), ExtField.NONE)))));
        v.add(new Vector("44_result_held", "the result of vector 43: the executor holds the two temporary "
                + "outputs in its cache and wrote only the log (120 bytes) to the store",
                new Message.Result(1, List.of(new Message.TaskResult(45, 0, new Execution(TaskStatus.EXITED, 0, 0,
                        1000, 2000, new byte[0], new byte[0], "", List.of(
                        new ExtField(ExtTags.DATA_STATS, DataCodec.encodeStats(new DataStats(0, 0, 1, 0, 0, 2_097_152,
                                0, 120))),
                        new ExtField(ExtTags.HELD, DataCodec.encodeHeld(List.of("proj/p1.fits",
                                "proj/p1_area.fits"))))))))));
        v.add(new Vector("45_release", "the dispatcher lets the executor evict two temporary objects: every task "
                + "that reads them has finished",
                new Message.Release(List.of("proj/p1.fits", "proj/p1_area.fits"))));
        v.add(new Vector("46_replicate", "a multicast step: fetch the BLAST database slice now, ahead of the "
                + "tasks that will read it, from the peer at 10.0.0.7:7002 (else the store), 64 MiB, verified",
                new Message.Replicate(List.of(new Message.Replica("blast/nr.00.tar", "blast/nr.00.tar", 67_108_864L,
                        "sha256:5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef",
                        List.of("10.0.0.7:7002"))))));
        v.add(new Vector("47_dispatch_archived_output", "a task whose small result file is appended to the "
                + "executor's output archive (output 0) instead of saved as a file of its own",
                new Message.Dispatch(List.of(new Message.DispatchedTask(46, 0, TaskSpecCodec.encode(
                        TaskSpec.builder("dock", "ligand-17.mol2").outputs(List.of(
                                new TaskOutput("score.txt", "scores/17", false, true))).build()), ExtField.NONE)))));
        v.add(new Vector("48_result_archived", "the result of vector 47: the 1 KiB score went into the archive "
                + "archives/n1-4242-1764201600000-1.tar at byte 1536 (after a tar header), with its SHA-256",
                new Message.Result(1, List.of(new Message.TaskResult(46, 0, new Execution(TaskStatus.EXITED, 0, 0,
                        1000, 2000, new byte[0], new byte[0], "", List.of(
                        new ExtField(ExtTags.DATA_STATS, DataCodec.encodeStats(new DataStats(0, 0, 0, 0, 0, 0, 0,
                                1024))),
                        new ExtField(ExtTags.ARCHIVED, DataCodec.encodeArchived(List.of(new DataCodec.ArchivedOutput(
                                "scores/17", "archives/n1-4242-1764201600000-1.tar", 1536, 1024,
                                "5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef")))))))))));
        v.add(new Vector("49_dispatch_disk", "a sort that states 2 cores, 512 MiB of memory and 20480 MiB of scratch "
                + "space: DISK is the dispatcher's account (it sent the task where that much of the executor's "
                + "advertised diskMiB was free); the executor runs the task as if the field were not there",
                new Message.Dispatch(List.of(new Message.DispatchedTask(49, 0, TaskSpecCodec.encode(
                        TaskSpec.builder("sort", "-S", "400M", "big.txt").resources(2, 512).disk(20_480).build()),
                        ExtField.NONE)))));
        v.add(new Vector("50_cancel_tasks", "request 9: cancel three tasks of the instance by the ids its client gave "
                + "them (falkon cancel INSTANCE --task 4 --task 5 --task 11)",
                new Message.CancelTasks(9, 0x1234_5678_9abc_def0L, new long[]{3, 4, 10})));
        v.add(new Vector("51_tasks_cancelled", "reply to request 9: 2 of them were unfinished and are cancelled (the "
                + "third had finished)", new Message.TasksCancelled(9, 0x1234_5678_9abc_def0L, 2)));
        v.add(new Vector("52_attach_moved", "request 6: re-attach after the dispatcher came back, cancelling the two "
                + "tasks the client sent to other dispatchers meanwhile (failover)", new Message.AttachMoved(6,
                0x1234_5678_9abc_def0L, "0f1e2d3c4b5a69788796a5b4c3d2e1f0", new long[]{7, 12})));
        Map<String, String> gpuAttrs = new LinkedHashMap<>();
        gpuAttrs.put("impl", "c");
        gpuAttrs.put("resources", "gpus=4,license=2");
        v.add(new Vector("53_register_resources", "an executor of 8 slots offers 4 GPUs (devices it picks for its "
                + "tasks) and 2 units of a licence: the resources attribute, names sorted",
                new Message.Register("gpu1-77", "gpu1", 8, 0, gpuAttrs)));
        v.add(new Vector("54_dispatch_named_resources", "a task that needs 2 GPUs and 1 licence of one executor "
                + "(NAMED_RESOURCES: count, then name and amount, names sorted); the executor hands it 2 devices in "
                + "CUDA_VISIBLE_DEVICES and FALKON_RESOURCE_GPUS, 1 in FALKON_RESOURCE_LICENSE",
                new Message.Dispatch(List.of(new Message.DispatchedTask(54, 0, TaskSpecCodec.encode(
                        TaskSpec.builder("python3", "infer.py", "batch-54").namedResources(
                                Map.of("gpus", 2, "license", 1)).build()), ExtField.NONE)))));
        v.add(new Vector("55_dispatch_read_only_inputs", "mAdd reads a corrected tile and the header "
                + "without changing them (READ_ONLY: inputs 0 and 2, by place); the executor may give them as "
                + "read-only views instead of copies. The tile list is the task's own copy: it may change it",
                new Message.Dispatch(List.of(new Message.DispatchedTask(55, 0, TaskSpecCodec.encode(
                        TaskSpec.builder("mAdd", "-p", "corr", "cimages.tbl", "region.hdr", "mosaic.fits").inputs(
                                List.of(new TaskInput("corr/t_0_0.fits", "corr/t_0_0.fits", -1, "",
                                                TaskInput.AS_STORED, "corr/", true),
                                        TaskInput.of("cimages.tbl", "cimages.tbl"),
                                        TaskInput.of("region.hdr", "region.hdr").asReadOnly()))
                                .outputs(List.of(new TaskOutput("mosaic.fits", "mosaic.fits"))).build()),
                        ExtField.NONE)))));
        return v;
    }

    public static byte[] frame(Message m) {
        ByteBuf buf = Unpooled.buffer();
        MessageCodec.encodeFrame(m, buf);
        byte[] b = new byte[buf.readableBytes()];
        buf.readBytes(b);
        return b;
    }

    /** The {@code .txt} text for a vector: comment lines, then the dump. */
    public static String describe(Vector v) {
        return "# " + v.name() + ": " + v.description() + "\n"
                + "# " + (EXECUTOR_TYPES.contains(v.message().type()) ? "executor-facing" : "client-facing")
                + " message; see docs/protocol.md\n"
                + MessageDump.dump(v.message());
    }

    public static void main(String[] args) {
        Path dir = Path.of(args.length > 0 ? args[0] : "protocol/src/test/resources/vectors");
        try {
            Files.createDirectories(dir);
            for (Vector v : all()) {
                Files.write(dir.resolve(v.name() + ".bin"), frame(v.message()));
                Files.writeString(dir.resolve(v.name() + ".txt"), describe(v));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Path workers = dir.resolveSibling("worker-vectors");
        WorkerVectors.write(workers);
        System.out.println("wrote " + all().size() + " vectors to " + dir + " and " + WorkerVectors.all().size()
                + " to " + workers);
    }
}
