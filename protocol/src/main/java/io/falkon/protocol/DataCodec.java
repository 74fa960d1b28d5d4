package io.falkon.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Encodings of the data-diffusion extensions ({@code docs/protocol.md} section 6):
 *
 * <pre>
 * INPUTS     = count:u16 (id:str source:str size:i64 checksum:str unpack:u8 name:str)*
 * OUTPUTS    = count:u16 (path:str id:str)*
 * TEMPORARY  = count:u16 (index:u16)*                       indexes into OUTPUTS, ascending, each once
 * HELD       = count:u16 (id:str)*
 * ARCHIVE    = count:u16 (index:u16)*                       as TEMPORARY
 * ARCHIVED   = count:u16 (id:str archive:str offset:u64 size:u64 sha256:str)*
 * READ_ONLY  = count:u16 (index:u16)*                       indexes into INPUTS, ascending, each once
 * HINTS      = count:u16 (id:str peers:u16 (peer:str)*)*       peer = "host:port" of a cache server
 * DATA_STATS = localHits:u32 peerHits:u32 misses:u32 bytesLocal:u64 bytesPeer:u64 bytesStore:u64
 *              [refetched:u32 [bytesWritten:u64]]      (later fields optional: older executors omit them)
 * AFTER      = count:u16 (name:str)*
 * DEPENDENCY = producer:u64 what:str
 * </pre>
 */
public final class DataCodec {
    private DataCodec() {
    }

    public static byte[] encodeInputs(List<TaskInput> inputs) {
        ByteBuf b = Unpooled.buffer();
        WireWriter.u16(b, inputs.size(), "inputs count");
        for (TaskInput i : inputs) {
            WireWriter.str(b, i.id());
            WireWriter.str(b, i.source());
            b.writeLong(i.size());
            WireWriter.str(b, i.checksum());
            b.writeByte(i.unpack());
            WireWriter.str(b, i.name());
        }
        return bytes(b);
    }

    /**
     * Why a task's inputs cannot all be staged, or null: each is put in the task's sandbox under its
     * {@link TaskInput#fileName()}, fetched concurrently, so two of the same file name would
     * overwrite each other.
     */
    public static String stagingClash(List<TaskInput> inputs) {
        if (inputs.size() < 2) {
            return null;
        }
        Map<String, Integer> seen = new HashMap<>();
        Map<String, Integer> directories = new HashMap<>();
        for (int i = 0; i < inputs.size(); i++) {
            TaskInput in = inputs.get(i);
            Integer before = seen.putIfAbsent(in.fileName(), i);
            if (before != null) {
                return "inputs[" + i + "] would be staged as '" + LogSafe.text(in.fileName())
                        + "', like inputs[" + before + "]: give one of them another name";
            }
            if (in.directory() != null) {
                directories.putIfAbsent(in.directory(), i);
            }
        }
        for (Map.Entry<String, Integer> d : directories.entrySet()) {
            Integer file = seen.get(d.getKey());
            if (file != null) {
                return "inputs[" + file + "] would be staged as '" + LogSafe.text(d.getKey()) + "', the directory "
                        + "inputs[" + d.getValue() + "] goes into: give one of them another name";
            }
        }
        return null;
    }

    public static List<TaskInput> decodeInputs(byte[] value) {
        WireReader in = new WireReader(Unpooled.wrappedBuffer(value));
        int n = in.u16("inputs count");
        List<TaskInput> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            try {
                out.add(new TaskInput(in.utf8("id"), in.utf8("source"), in.i64("size"), in.str("checksum"),
                        in.u8("unpack"), in.utf8("name")));
            } catch (IllegalArgumentException e) {
                throw new ProtocolException(ErrorCode.MALFORMED, "inputs[" + i + "]: " + e.getMessage());
            } catch (ProtocolException e) {
                throw e.within("inputs[" + i + "].");
            }
        }
        in.end("inputs");
        return out;
    }

    /** Longest task name: names are for people and task files, and the dispatcher indexes them. */
    public static final int MAX_NAME_BYTES = 1024;

    /** Why {@code name} cannot name a task, or null: it must be 1..1024 bytes, without control characters. */
    public static String nameProblem(String name) {
        if (name == null || name.isEmpty()) {
            return "a task name must not be empty";
        }
        if (name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
            return "a task name must be at most " + MAX_NAME_BYTES + " bytes";
        }
        for (int i = 0; i < name.length(); i++) {
            if (Character.isISOControl(name.charAt(i))) {
                return "a task name must not hold control characters";
            }
        }
        return null;
    }

    public static byte[] encodeNames(List<String> names) {
        ByteBuf b = Unpooled.buffer();
        WireWriter.u16(b, names.size(), "after count");
        for (String n : names) {
            WireWriter.str(b, n);
        }
        return bytes(b);
    }

    public static List<String> decodeNames(byte[] value) {
        WireReader in = new WireReader(Unpooled.wrappedBuffer(value));
        int n = in.u16("after count");
        List<String> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String name = in.str("after[" + i + "]");
            String problem = nameProblem(name);
            if (problem != null) {
                throw new ProtocolException(ErrorCode.MALFORMED, "after[" + i + "]: " + problem);
            }
            out.add(name);
        }
        in.end("after");
        return out;
    }

    /** The DEPENDENCY field of a DEPENDENCY_FAILED result: which task failed upstream, and what of it was needed. */
    public record Dependency(long producer, String what) {
    }

    public static byte[] encodeDependency(Dependency d) {
        ByteBuf b = Unpooled.buffer();
        b.writeLong(d.producer());
        WireWriter.str(b, d.what());
        return bytes(b);
    }

    /** The DEPENDENCY field of an execution, or null. */
    public static Dependency dependencyOf(Execution x) {
        for (ExtField f : x.ext()) {
            if (f.tag() == ExtTags.DEPENDENCY) {
                WireReader in = new WireReader(Unpooled.wrappedBuffer(f.value()));
                Dependency d = new Dependency(in.u64("producer"), in.str("what"));
                in.end("dependency");
                return d;
            }
        }
        return null;
    }

    public static byte[] encodeOutputs(List<TaskOutput> outputs) {
        ByteBuf b = Unpooled.buffer();
        WireWriter.u16(b, outputs.size(), "outputs count");
        for (TaskOutput o : outputs) {
            WireWriter.str(b, o.path());
            WireWriter.str(b, o.id());
        }
        return bytes(b);
    }

    public static List<TaskOutput> decodeOutputs(byte[] value) {
        WireReader in = new WireReader(Unpooled.wrappedBuffer(value));
        int n = in.u16("outputs count");
        List<TaskOutput> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            try {
                out.add(new TaskOutput(in.utf8("path"), in.utf8("id")));
            } catch (IllegalArgumentException e) {
                throw new ProtocolException(ErrorCode.MALFORMED, "outputs[" + i + "]: " + e.getMessage());
            } catch (ProtocolException e) {
                throw e.within("outputs[" + i + "].");
            }
        }
        in.end("outputs");
        return out;
    }

    /** The TEMPORARY field for {@code outputs}, or null when none of them is temporary. */
    public static byte[] encodeTemporary(List<TaskOutput> outputs) {
        return encodeMarks(outputs, TaskOutput::temporary);
    }

    /** The ARCHIVE field for {@code outputs}, or null when none of them is archived. */
    public static byte[] encodeArchive(List<TaskOutput> outputs) {
        return encodeMarks(outputs, TaskOutput::archived);
    }

    /** The READ_ONLY field for {@code inputs}, or null when none of them is read-only. */
    public static byte[] encodeReadOnly(List<TaskInput> inputs) {
        return encodeMarks(inputs, TaskInput::readOnly);
    }

    private static <T> byte[] encodeMarks(List<T> items, java.util.function.Predicate<T> marked) {
        int n = 0;
        for (T o : items) {
            n += marked.test(o) ? 1 : 0;
        }
        if (n == 0) {
            return null;
        }
        ByteBuf b = Unpooled.buffer();
        WireWriter.u16(b, n, "marked count");
        for (int i = 0; i < items.size(); i++) {
            if (marked.test(items.get(i))) {
                b.writeShort(i);
            }
        }
        return bytes(b);
    }

    /**
     * Which of {@code outputs} outputs the TEMPORARY field marks, as flags by place; refuses an
     * index past the list, or one out of order or repeated.
     */
    public static boolean[] decodeTemporary(byte[] value, int outputs) {
        return decodeMarks(value, outputs, "temporary");
    }

    /** The same for the ARCHIVE field, or any field of output indexes named {@code field}. */
    public static boolean[] decodeMarks(byte[] value, int outputs, String field) {
        return decodeMarks(value, outputs, field, "output");
    }

    /**
     * Which of {@code inputs} inputs the READ_ONLY field marks, as flags by place; refuses an index
     * past the list, or one out of order or repeated.
     */
    public static boolean[] decodeReadOnly(byte[] value, int inputs) {
        return decodeMarks(value, inputs, "readOnly", "input");
    }

    /** {@code inputs} marked as the READ_ONLY field says. */
    public static List<TaskInput> markReadOnly(List<TaskInput> inputs, byte[] readOnly) {
        boolean[] r = decodeReadOnly(readOnly, inputs.size());
        List<TaskInput> out = new ArrayList<>(inputs.size());
        for (int i = 0; i < inputs.size(); i++) {
            out.add(r[i] ? inputs.get(i).asReadOnly() : inputs.get(i));
        }
        return out;
    }

    /**
     * Why a task's read-only inputs cannot be given as they are, or null: a declared output at the
     * place a read-only input is given (the sandbox, when the task names no working directory) would
     * be saved from the executor's side of that place, which is not the input the task saw.
     */
    public static String readOnlyClash(List<TaskInput> inputs, List<TaskOutput> outputs, boolean ownWorkDir) {
        if (ownWorkDir || outputs.isEmpty()) {
            return null;
        }
        Map<String, Integer> readOnly = new HashMap<>();
        for (int i = 0; i < inputs.size(); i++) {
            if (inputs.get(i).readOnly()) {
                readOnly.putIfAbsent(inputs.get(i).fileName(), i);
            }
        }
        for (int k = 0; k < outputs.size() && !readOnly.isEmpty(); k++) {
            Integer i = readOnly.get(outputs.get(k).path());
            if (i != null) {
                return "outputs[" + k + "] '" + LogSafe.text(outputs.get(k).path()) + "' is the path of read-only "
                        + "inputs[" + i + "], which the task may not change: drop readOnly or give the output another "
                        + "path";
            }
        }
        return null;
    }

    private static boolean[] decodeMarks(byte[] value, int outputs, String field, String noun) {
        WireReader in = new WireReader(Unpooled.wrappedBuffer(value));
        int n = in.u16(field + " count");
        boolean[] out = new boolean[outputs];
        int last = -1;
        for (int i = 0; i < n; i++) {
            int k = in.u16(field + "[" + i + "]");
            if (k >= outputs) {
                throw new ProtocolException(ErrorCode.MALFORMED, field + "[" + i + "]: " + noun + " " + k
                        + " does not exist (the task declares " + outputs + ")");
            }
            if (k <= last) {
                throw new ProtocolException(ErrorCode.MALFORMED, field + "[" + i + "]: " + noun + " indexes must "
                        + "ascend, each once");
            }
            out[k] = true;
            last = k;
        }
        in.end(field);
        return out;
    }

    /**
     * {@code outputs} marked as the TEMPORARY and ARCHIVE fields (either may be null) say; an output
     * marked by both is refused.
     */
    public static List<TaskOutput> mark(List<TaskOutput> outputs, byte[] temporary, byte[] archive) {
        boolean[] t = temporary == null ? new boolean[outputs.size()] : decodeTemporary(temporary, outputs.size());
        boolean[] a = archive == null ? new boolean[outputs.size()] : decodeMarks(archive, outputs.size(), "archive");
        List<TaskOutput> out = new ArrayList<>(outputs.size());
        for (int i = 0; i < outputs.size(); i++) {
            if (t[i] && a[i]) {
                throw new ProtocolException(ErrorCode.MALFORMED, "outputs[" + i + "]: marked both TEMPORARY and "
                        + "ARCHIVE");
            }
            out.add(t[i] ? outputs.get(i).asTemporary() : a[i] ? outputs.get(i).asArchived() : outputs.get(i));
        }
        return out;
    }

    /** Where one archived output went: its archive under the output root, the offset and size of its bytes. */
    public record ArchivedOutput(String id, String archive, long offset, long size, String sha256) {
    }

    public static byte[] encodeArchived(List<ArchivedOutput> entries) {
        ByteBuf b = Unpooled.buffer();
        WireWriter.u16(b, entries.size(), "archived count");
        for (ArchivedOutput e : entries) {
            WireWriter.str(b, e.id());
            WireWriter.str(b, e.archive());
            b.writeLong(e.offset());
            b.writeLong(e.size());
            WireWriter.str(b, e.sha256());
        }
        return bytes(b);
    }

    /** The archived outputs an Execution's ARCHIVED field names; empty without one. */
    public static List<ArchivedOutput> archivedOf(Execution x) {
        for (ExtField f : x.ext()) {
            if (f.tag() == ExtTags.ARCHIVED) {
                WireReader in = new WireReader(Unpooled.wrappedBuffer(f.value()));
                int n = in.u16("archived count");
                List<ArchivedOutput> out = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    out.add(new ArchivedOutput(id(in, "archived[" + i + "].id"), in.str("archived.archive"),
                            in.i64("archived.offset"), in.i64("archived.size"), in.str("archived.sha256")));
                }
                in.end("archived");
                return out;
            }
        }
        return List.of();
    }

    /** The HELD field of an Execution: the temporary outputs the executor keeps. */
    public static byte[] encodeHeld(List<String> ids) {
        ByteBuf b = Unpooled.buffer();
        WireWriter.u16(b, ids.size(), "held count");
        for (String id : ids) {
            WireWriter.str(b, id);
        }
        return bytes(b);
    }

    /** The ids an Execution's HELD field names; empty without one. */
    public static List<String> heldOf(Execution x) {
        for (ExtField f : x.ext()) {
            if (f.tag() == ExtTags.HELD) {
                WireReader in = new WireReader(Unpooled.wrappedBuffer(f.value()));
                int n = in.u16("held count");
                List<String> out = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    out.add(id(in, "held[" + i + "]"));
                }
                in.end("held");
                return out;
            }
        }
        return List.of();
    }

    /** @param hints object id to the peers believed to hold it, in order of preference */
    public static byte[] encodeHints(Map<String, List<String>> hints) {
        ByteBuf b = Unpooled.buffer();
        WireWriter.u16(b, hints.size(), "hints count");
        for (Map.Entry<String, List<String>> e : hints.entrySet()) {
            WireWriter.str(b, e.getKey());
            WireWriter.u16(b, e.getValue().size(), "peers count");
            for (String peer : e.getValue()) {
                WireWriter.str(b, peer);
            }
        }
        return bytes(b);
    }

    public static Map<String, List<String>> decodeHints(byte[] value) {
        WireReader in = new WireReader(Unpooled.wrappedBuffer(value));
        int n = in.u16("hints count");
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            String id = id(in, "hints[" + i + "].id");
            int m = in.u16("hints[" + i + "].peers");
            List<String> peers = new ArrayList<>(m);
            for (int k = 0; k < m; k++) {
                peers.add(in.str("hints[" + i + "].peers[" + k + "]"));
            }
            out.put(id, peers);
        }
        in.end("hints");
        return out;
    }

    public static byte[] encodeStats(DataStats s) {
        ByteBuf b = Unpooled.buffer(48);
        WireWriter.u32(b, Math.min(s.localHits(), 0xFFFF_FFFFL), "localHits");
        WireWriter.u32(b, Math.min(s.peerHits(), 0xFFFF_FFFFL), "peerHits");
        WireWriter.u32(b, Math.min(s.misses(), 0xFFFF_FFFFL), "misses");
        b.writeLong(s.bytesLocal());
        b.writeLong(s.bytesPeer());
        b.writeLong(s.bytesStore());
        WireWriter.u32(b, Math.min(s.refetched(), 0xFFFF_FFFFL), "refetched");
        b.writeLong(s.bytesWritten());
        return bytes(b);
    }

    /** Decodes DATA_STATS; {@code refetched} and {@code bytesWritten} are optional (absent in older forms: 0). */
    public static DataStats decodeStats(byte[] value) {
        WireReader in = new WireReader(Unpooled.wrappedBuffer(value));
        long localHits = in.u32("localHits");
        long peerHits = in.u32("peerHits");
        long misses = in.u32("misses");
        long bytesLocal = in.u64("bytesLocal");
        long bytesPeer = in.u64("bytesPeer");
        long bytesStore = in.u64("bytesStore");
        long refetched = value.length > 36 ? in.u32("refetched") : 0;
        long bytesWritten = value.length > 40 ? in.u64("bytesWritten") : 0;
        in.end("data stats");
        return new DataStats(localHits, peerHits, misses, bytesLocal, bytesPeer, bytesStore, refetched,
                bytesWritten);
    }

    /** The DATA_STATS of an execution, or {@link DataStats#ZERO} if it has none (or an undecodable one). */
    public static DataStats statsOf(Execution x) {
        for (ExtField f : x.ext()) {
            if (f.tag() == ExtTags.DATA_STATS) {
                try {
                    return decodeStats(f.value());
                } catch (ProtocolException e) {
                    return DataStats.ZERO;
                }
            }
        }
        return DataStats.ZERO;
    }

    /** An object id read off the wire: refused (MALFORMED) unless canonical ({@link ObjectId}). */
    private static String id(WireReader in, String field) {
        String id = in.utf8(field);
        String problem = ObjectId.problem(id);
        if (problem != null) {
            throw new ProtocolException(ErrorCode.MALFORMED, field + ": " + problem);
        }
        return id;
    }

    private static byte[] bytes(ByteBuf b) {
        byte[] a = new byte[b.readableBytes()];
        b.readBytes(a);
        return a;
    }
}
