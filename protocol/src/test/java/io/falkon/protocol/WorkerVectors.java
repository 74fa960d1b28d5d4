package io.falkon.protocol;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The golden vectors of the persistent-worker framing ({@link WorkerFrames}), behind
 * {@code src/test/resources/worker-vectors/}: shared with the C executor and the Python worker, and
 * rewritten only on purpose, with the message vectors ({@link GoldenVectors#main}).
 */
public final class WorkerVectors {

    /** One vector: a file stem, what it shows, and the frame (a Request or a Response). */
    public record Vector(String name, String description, Object frame) {
        public byte[] bytes() {
            return frame instanceof WorkerFrames.Request r ? r.encode() : ((WorkerFrames.Response) frame).encode();
        }
    }

    private WorkerVectors() {
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    public static List<Vector> all() {
        return List.of(
                new Vector("01_request", "task 7 for a worker: two arguments, one variable, its directory, a payload",
                        new WorkerFrames.Request(7, 65_536, List.of("call", "/scratch/7.out"),
                                Map.of("OMP_NUM_THREADS", "1"), "/scratch", new byte[]{(byte) 0x80, 4, 'K', '.'})),
                new Vector("02_response", "the worker's answer to task 7: exit 0, a result on stdout, a warning",
                        new WorkerFrames.Response(7, 0, utf8("42\n"), utf8("warning: é\n"))),
                new Vector("03_request_bare", "task 8: no variables, no payload, the executor's directory",
                        new WorkerFrames.Request(8, 1024, List.of("true"), Map.of(), "/home/u", new byte[0])),
                new Vector("04_response_failed", "task 8 failed: exit 3, nothing on stdout",
                        new WorkerFrames.Response(8, 3, new byte[0], utf8("no such input\n"))));
    }

    public static String dump(Object frame) {
        StringBuilder b = new StringBuilder();
        if (frame instanceof WorkerFrames.Request r) {
            b.append("frame = request\ntaskId = ").append(r.taskId()).append("\nmaxOutput = ").append(r.maxOutput())
                    .append("\nargv.count = ").append(r.argv().size()).append('\n');
            for (int i = 0; i < r.argv().size(); i++) {
                b.append("argv[").append(i).append("] = ").append(MessageDump.quote(utf8(r.argv().get(i)))).append('\n');
            }
            Map<String, String> env = new TreeMap<>(r.env());
            b.append("env.count = ").append(env.size()).append('\n');
            int i = 0;
            for (Map.Entry<String, String> e : env.entrySet()) {
                b.append("env[").append(i).append("].key = ").append(MessageDump.quote(utf8(e.getKey()))).append('\n');
                b.append("env[").append(i++).append("].value = ").append(MessageDump.quote(utf8(e.getValue())))
                        .append('\n');
            }
            b.append("workDir = ").append(MessageDump.quote(utf8(r.workDir()))).append('\n');
            b.append("payload = ").append(MessageDump.quote(r.payload())).append('\n');
        } else {
            WorkerFrames.Response r = (WorkerFrames.Response) frame;
            b.append("frame = response\ntaskId = ").append(r.taskId()).append("\nexitCode = ").append(r.exitCode())
                    .append("\nstdout = ").append(MessageDump.quote(r.stdout()))
                    .append("\nstderr = ").append(MessageDump.quote(r.stderr())).append('\n');
        }
        return b.toString();
    }

    public static String describe(Vector v) {
        return "# " + v.name() + ": " + v.description() + "\n# persistent-worker frame; see docs/protocol.md section 9\n"
                + dump(v.frame());
    }

    public static void write(Path dir) {
        try {
            Files.createDirectories(dir);
            for (Vector v : all()) {
                Files.write(dir.resolve(v.name() + ".bin"), v.bytes());
                Files.writeString(dir.resolve(v.name() + ".txt"), describe(v));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
