package io.falkon.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
     * What the dispatcher needs from an encoded spec: whether it is valid, its retry limit (-1: not
     * set), its wall-time limit, its input objects' ids and sizes (null without inputs), and how
     * many times it runs again after failing on its own.
     */
    public record Scan(String problem, int retries, long wallTimeMillis, String[] inputIds, long[] inputSizes,
                       int retriesOnFailure, String[] outputIds, String name, String[] after, int priority,
                       int cores, long memoryMiB, long diskMiB, NamedResources named, boolean[] temporary) {
        static Scan invalid(String problem) {
            return new Scan(problem, -1, 0, null, null, 0, null, null, null, 0, 1, 0, 0, null, null);
        }

        /** Whether the task takes part in its instance's dataflow: it produces something others can wait for. */
        public boolean produces() {
            return outputIds != null || name != null;
        }

        public boolean valid() {
            return problem == null;
        }
    }

    /**
     * How many slots the task of an encoded spec takes ({@link ExtTags#RESOURCES} cores): 1 when it
     * states none or is malformed. Reads past the rest without checking it or allocating strings, for
     * the credits an executor returns with a result.
     */
    public static int cores(byte[] blob) {
        ByteBuf buf = Unpooled.wrappedBuffer(blob);
        WireReader in = new WireReader(buf);
        try {
            for (int i = 0, n = in.count("argv", 4); i < n; i++) {
                in.skipBlob("argv");
            }
            for (int i = 0, n = in.count("env", 8); i < n; i++) {
                in.skipBlob("env key");
                in.skipBlob("env value");
            }
            in.skipBlob("workDir");
            in.u32("wallTimeMillis");
            for (int i = 0, n = in.u16("ext"); i < n; i++) {
                int tag = in.u16("ext tag");
                if (tag == ExtTags.RESOURCES && in.u32("resources length") == 8) {
                    return (int) Math.max(1, Math.min(TaskSpec.MAX_CORES, in.u32("cores")));
                } else if (tag != ExtTags.RESOURCES) {
                    in.skipBlob("ext value");
                } else {
                    return 1;
                }
            }
        } catch (ProtocolException e) {
            // malformed: the executor reports it as such, and it took one slot
        }
        return 1;
    }

    /**
     * Checks an encoded spec without building it: the reason it is invalid, or {@code null}.
     */
    public static String validate(byte[] blob) {
        return scan(blob).problem();
    }

    /**
     * Checks an encoded spec without building it and picks out what the dispatcher needs. Run on
     * every submitted task, so a valid spec without extensions allocates nothing.
     */
    public static Scan scan(byte[] blob) {
        ByteBuf buf = Unpooled.wrappedBuffer(blob);
        WireReader in = new WireReader(buf);
        try {
            int argc = in.count("argv", 4);
            if (argc == 0) {
                return Scan.invalid("argv is empty (a task needs a command)");
            }
            for (int i = 0; i < argc; i++) {
                int len = in.count("argv[" + i + "]", 1);
                if (i == 0 && len == 0) {
                    return Scan.invalid("argv[0] (the command) is empty");
                }
                buf.skipBytes(len);
            }
            int envc = in.count("env", 8);
            Set<String> keys = envc > 1 ? new HashSet<>() : null;
            for (int i = 0; i < envc; i++) {
                int len = in.count("env key", 1);
                int at = buf.readerIndex();
                if (len == 0 || buf.indexOf(at, at + len, (byte) '=') >= 0) {
                    return Scan.invalid("env[" + i + "] has an invalid variable name");
                }
                if (keys != null && !keys.add(buf.toString(at, len, StandardCharsets.UTF_8))) {
                    return Scan.invalid("env[" + i + "] repeats a variable name");
                }
                buf.skipBytes(len);
                in.skipBlob("env value");
            }
            int workDirBytes = in.count("workDir", 1);
            buf.skipBytes(workDirBytes);
            boolean ownWorkDir = workDirBytes > 0; // outputs are then not in the sandbox the inputs go into
            long wallTime = in.u32("wallTimeMillis");
            int extc = in.u16("ext");
            int retries = -1;
            int onFailure = 0;
            String[] outputIds = null;
            String name = null;
            String[] after = null;
            int priority = 0;
            long cores = 1;
            long memory = 0;
            long disk = 0;
            NamedResources named = null;
            String[] ids = null;
            long[] sizes = null;
            byte[] temporaryField = null;
            byte[] archiveField = null;
            byte[] readOnlyField = null;
            List<TaskInput> inputList = List.of();
            List<TaskOutput> outputList = List.of();
            for (int i = 0; i < extc; i++) {
                int tag = in.u16("ext tag");
                if (tag == ExtTags.RETRIES) {
                    if (in.u32("retries length") != 1) {
                        return Scan.invalid("ext RETRIES must hold one byte");
                    }
                    retries = in.u8("retries");
                } else if (tag == ExtTags.RETRIES_ON_FAILURE) {
                    if (in.u32("retries on failure length") != 1) {
                        return Scan.invalid("ext RETRIES_ON_FAILURE must hold one byte");
                    }
                    onFailure = in.u8("retries on failure");
                } else if (tag == ExtTags.INPUTS) {
                    List<TaskInput> inputs = DataCodec.decodeInputs(in.blob("inputs"));
                    inputList = inputs;
                    String clash = DataCodec.stagingClash(inputs);
                    if (clash != null) {
                        return Scan.invalid(clash);
                    }
                    ids = new String[inputs.size()];
                    sizes = new long[inputs.size()];
                    for (int k = 0; k < ids.length; k++) {
                        ids[k] = inputs.get(k).id();
                        sizes[k] = Math.max(0, inputs.get(k).size());
                    }
                } else if (tag == ExtTags.OUTPUTS) {
                    List<TaskOutput> outputs = DataCodec.decodeOutputs(in.blob("outputs"));
                    outputList = outputs;
                    outputIds = new String[outputs.size()];
                    for (int k = 0; k < outputIds.length; k++) {
                        outputIds[k] = outputs.get(k).id();
                    }
                } else if (tag == ExtTags.NAME) {
                    name = new String(in.blob("name"), StandardCharsets.UTF_8);
                    String problem = DataCodec.nameProblem(name);
                    if (problem != null) {
                        return Scan.invalid("ext NAME: " + problem);
                    }
                } else if (tag == ExtTags.AFTER) {
                    after = DataCodec.decodeNames(in.blob("after")).toArray(String[]::new);
                } else if (tag == ExtTags.PRIORITY) {
                    if (in.u32("priority length") != 4) {
                        return Scan.invalid("ext PRIORITY must hold four bytes (a signed 32-bit integer)");
                    }
                    priority = (int) in.u32("priority");
                } else if (tag == ExtTags.RESOURCES) {
                    if (in.u32("resources length") != 8) {
                        return Scan.invalid("ext RESOURCES must hold eight bytes (cores:u32 memoryMiB:u32)");
                    }
                    cores = in.u32("cores");
                    memory = in.u32("memoryMiB");
                    String problem = TaskSpec.resourcesProblem(cores, memory);
                    if (problem != null) {
                        return Scan.invalid("ext RESOURCES: " + problem);
                    }
                } else if (tag == ExtTags.DISK) {
                    if (in.u32("disk length") != 4) {
                        return Scan.invalid("ext DISK must hold four bytes (diskMiB:u32)");
                    }
                    disk = in.u32("diskMiB");
                } else if (tag == ExtTags.NAMED_RESOURCES) {
                    named = NamedResources.decode(in.blob("named resources"));
                } else if (tag == ExtTags.WORKER) {
                    PersistentWorker.decode(in.blob("worker"));
                } else if (tag == ExtTags.TEMPORARY) {
                    temporaryField = in.blob("temporary");
                } else if (tag == ExtTags.ARCHIVE) {
                    archiveField = in.blob("archive");
                } else if (tag == ExtTags.READ_ONLY) {
                    readOnlyField = in.blob("readOnly");
                } else {
                    in.skipBlob("ext value");
                }
            }
            in.end("spec");
            if (readOnlyField != null) { // checked against the inputs and outputs, wherever the fields are
                String clash = DataCodec.readOnlyClash(DataCodec.markReadOnly(inputList, readOnlyField), outputList,
                        ownWorkDir);
                if (clash != null) {
                    return Scan.invalid(clash);
                }
            }
            int outputs = outputIds == null ? 0 : outputIds.length;
            if (archiveField != null) {
                boolean[] archived = DataCodec.decodeMarks(archiveField, outputs, "archive");
                boolean[] temp = temporaryField == null ? new boolean[outputs]
                        : DataCodec.decodeTemporary(temporaryField, outputs);
                for (int k = 0; k < outputs; k++) {
                    if (archived[k] && temp[k]) {
                        return Scan.invalid("outputs[" + k + "] is marked both temporary and archived");
                    }
                }
            }
            boolean[] temporary = null;
            if (temporaryField != null) { // checked against the outputs, wherever the two fields are
                temporary = DataCodec.decodeTemporary(temporaryField, outputIds == null ? 0 : outputIds.length);
                boolean any = false;
                for (boolean b : temporary) {
                    any |= b;
                }
                temporary = any ? temporary : null;
            }
            return new Scan(null, retries, wallTime, ids, sizes, onFailure,
                    outputIds == null || outputIds.length == 0 ? null : outputIds, name,
                    after == null || after.length == 0 ? null : after, priority, (int) cores, memory, disk,
                    named, temporary);
        } catch (ProtocolException e) {
            return Scan.invalid(e.getMessage());
        }
    }
}
