package io.falkon.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * What an executor and a {@link PersistentWorker} say to each other over the worker's standard input
 * and output (docs/protocol.md section 9): one request per task, answered by one response, each
 * {@code length:u32} then the body, in the field encodings of section 3.
 *
 * <pre>
 * request  = taskId:u64 maxOutput:u32 argv:list&lt;str&gt; env:map workDir:str payload:blob
 * response = taskId:u64 exitCode:i32 stdout:blob stderr:blob
 * </pre>
 */
public final class WorkerFrames {

    /** The longest frame either side accepts (the protocol's frame limit). */
    public static final int MAX_FRAME = Protocol.DEFAULT_MAX_FRAME_LENGTH;

    private WorkerFrames() {
    }

    /**
     * One task for the worker.
     *
     * @param maxOutput the executor keeps at most this many bytes of each of stdout and stderr
     * @param env       the task's variables (and the executor's for it), to be applied for the task
     * @param workDir   the directory the task runs in
     */
    public record Request(long taskId, int maxOutput, List<String> argv, Map<String, String> env, String workDir,
                          byte[] payload) {
        public Request {
            argv = List.copyOf(argv);
            env = Map.copyOf(env);
        }

        public byte[] encode() {
            ByteBuf b = Unpooled.buffer(64 + payload.length);
            b.writeInt(0);
            b.writeLong(taskId);
            WireWriter.u32(b, maxOutput, "maxOutput");
            WireWriter.strList(b, argv);
            WireWriter.map(b, new java.util.TreeMap<>(env));
            WireWriter.str(b, workDir);
            WireWriter.blob(b, payload);
            return framed(b);
        }

        public static Request decode(byte[] body) {
            WireReader in = new WireReader(Unpooled.wrappedBuffer(body));
            Request r = new Request(in.u64("taskId"), in.u31("maxOutput"), in.strList("argv"), in.map("env"),
                    in.str("workDir"), in.blob("payload"));
            in.end("worker request");
            return r;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Request r && r.taskId == taskId && r.maxOutput == maxOutput && r.argv.equals(argv)
                    && r.env.equals(env) && r.workDir.equals(workDir) && Arrays.equals(r.payload, payload);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(taskId) * 31 + argv.hashCode();
        }
    }

    /** How the worker's task ended: its exit code (0 for success) and what it wrote. */
    public record Response(long taskId, int exitCode, byte[] stdout, byte[] stderr) {
        public byte[] encode() {
            ByteBuf b = Unpooled.buffer(24 + stdout.length + stderr.length);
            b.writeInt(0);
            b.writeLong(taskId);
            b.writeInt(exitCode);
            WireWriter.blob(b, stdout);
            WireWriter.blob(b, stderr);
            return framed(b);
        }

        /** The body after its length prefix; malformed bytes are a {@link ProtocolException} naming the field. */
        public static Response decode(byte[] body) {
            WireReader in = new WireReader(Unpooled.wrappedBuffer(body));
            Response r = new Response(in.u64("taskId"), in.i32("exitCode"), in.blob("stdout"), in.blob("stderr"));
            in.end("worker response");
            return r;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Response r && r.taskId == taskId && r.exitCode == exitCode
                    && Arrays.equals(r.stdout, stdout) && Arrays.equals(r.stderr, stderr);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(taskId) * 31 + exitCode;
        }
    }

    private static byte[] framed(ByteBuf b) {
        b.setInt(0, b.readableBytes() - 4);
        byte[] a = new byte[b.readableBytes()];
        b.readBytes(a);
        return a;
    }
}
