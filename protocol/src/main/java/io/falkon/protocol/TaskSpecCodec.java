package io.falkon.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.util.List;
import java.util.Map;

/**
 * Encodes and decodes the {@code TaskSpec} blob ({@code docs/protocol.md} section 4.4):
 * {@code argv:list<str> env:map workDir:str wallTimeMillis:u32 ext:ext}.
 */
public final class TaskSpecCodec {
    private TaskSpecCodec() {
    }

    public static byte[] encode(TaskSpec spec) {
        ByteBuf out = Unpooled.buffer(estimate(spec));
        encode(spec, out);
        byte[] b = new byte[out.readableBytes()];
        out.readBytes(b);
        return b;
    }

    public static void encode(TaskSpec spec, ByteBuf out) {
        WireWriter.strList(out, spec.argv());
        WireWriter.map(out, spec.env());
        WireWriter.str(out, spec.workDir());
        WireWriter.u32(out, spec.wallTimeMillis(), "wallTimeMillis");
        WireWriter.ext(out, spec.ext());
    }

    private static int estimate(TaskSpec spec) {
        int n = 16 + spec.workDir().length();
        for (String a : spec.argv()) {
            n += 4 + a.length();
        }
        for (Map.Entry<String, String> e : spec.env().entrySet()) {
            n += 8 + e.getKey().length() + e.getValue().length();
        }
        return n;
    }

    public static TaskSpec decode(byte[] blob) {
        return decode(new WireReader(Unpooled.wrappedBuffer(blob)));
    }

    /** Decodes a spec that occupies exactly the rest of {@code in}. */
    public static TaskSpec decode(WireReader in) {
        List<String> argv = in.strList("argv");
        Map<String, String> env = in.map("env");
        String workDir = in.str("workDir");
        long wallTime = in.u32("wallTimeMillis");
        List<ExtField> ext = in.ext("ext");
        in.end("spec");
        String problem = TaskSpec.problem(argv, env, wallTime);
        if (problem != null) {
            throw new ProtocolException(ErrorCode.MALFORMED, problem);
        }
        return new TaskSpec(argv, env, workDir, wallTime, ext);
    }

    /**
     * Checks an encoded spec without building it: the reason it is invalid, or {@code null}. Used by
     * the dispatcher on every submitted task, so it allocates nothing for a valid spec.
     */
    public static String validate(byte[] blob) {
        ByteBuf buf = Unpooled.wrappedBuffer(blob);
        WireReader in = new WireReader(buf);
        try {
            int argc = in.count("argv", 4);
            if (argc == 0) {
                return "argv is empty (a task needs a command)";
            }
            for (int i = 0; i < argc; i++) {
                int len = in.count("argv[" + i + "]", 1);
                if (i == 0 && len == 0) {
                    return "argv[0] (the command) is empty";
                }
                buf.skipBytes(len);
            }
            int envc = in.count("env", 8);
            java.util.Set<String> keys = envc > 1 ? new java.util.HashSet<>() : null;
            for (int i = 0; i < envc; i++) {
                int len = in.count("env key", 1);
                int at = buf.readerIndex();
                if (len == 0 || buf.indexOf(at, at + len, (byte) '=') >= 0) {
                    return "env[" + i + "] has an invalid variable name";
                }
                if (keys != null && !keys.add(buf.toString(at, len, java.nio.charset.StandardCharsets.UTF_8))) {
                    return "env[" + i + "] repeats a variable name";
                }
                buf.skipBytes(len);
                in.skipBlob("env value");
            }
            in.skipBlob("workDir");
            in.u32("wallTimeMillis");
            int extc = in.u16("ext");
            for (int i = 0; i < extc; i++) {
                in.u16("ext tag");
                in.skipBlob("ext value");
            }
            in.end("spec");
            return null;
        } catch (ProtocolException e) {
            return e.getMessage();
        }
    }
}
