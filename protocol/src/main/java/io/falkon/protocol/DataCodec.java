package io.falkon.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Encodings of the data-diffusion extensions ({@code docs/protocol.md} section 6):
 *
 * <pre>
 * INPUTS     = count:u16 (id:str source:str size:i64 checksum:str unpack:u8 name:str)*
 * OUTPUTS    = count:u16 (path:str id:str)*
 * HINTS      = count:u16 (id:str peers:u16 (peer:str)*)*       peer = "host:port" of a cache server
 * DATA_STATS = localHits:u32 peerHits:u32 misses:u32 bytesLocal:u64 bytesPeer:u64 bytesStore:u64
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

    public static List<TaskInput> decodeInputs(byte[] value) {
        WireReader in = new WireReader(Unpooled.wrappedBuffer(value));
        int n = in.u16("inputs count");
        List<TaskInput> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            try {
                out.add(new TaskInput(in.str("id"), in.str("source"), in.i64("size"), in.str("checksum"),
                        in.u8("unpack"), in.str("name")));
            } catch (IllegalArgumentException e) {
                throw new ProtocolException(ErrorCode.MALFORMED, "inputs[" + i + "]: " + e.getMessage());
            } catch (ProtocolException e) {
                throw e.within("inputs[" + i + "].");
            }
        }
        in.end("inputs");
        return out;
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
                out.add(new TaskOutput(in.str("path"), in.str("id")));
            } catch (IllegalArgumentException e) {
                throw new ProtocolException(ErrorCode.MALFORMED, "outputs[" + i + "]: " + e.getMessage());
            }
        }
        in.end("outputs");
        return out;
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
            String id = in.str("hints[" + i + "].id");
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
        ByteBuf b = Unpooled.buffer(40);
        WireWriter.u32(b, Math.min(s.localHits(), 0xFFFF_FFFFL), "localHits");
        WireWriter.u32(b, Math.min(s.peerHits(), 0xFFFF_FFFFL), "peerHits");
        WireWriter.u32(b, Math.min(s.misses(), 0xFFFF_FFFFL), "misses");
        b.writeLong(s.bytesLocal());
        b.writeLong(s.bytesPeer());
        b.writeLong(s.bytesStore());
        WireWriter.u32(b, Math.min(s.refetched(), 0xFFFF_FFFFL), "refetched");
        return bytes(b);
    }

    /** Decodes DATA_STATS; {@code refetched} is optional (absent in the first form: 0). */
    public static DataStats decodeStats(byte[] value) {
        WireReader in = new WireReader(Unpooled.wrappedBuffer(value));
        long localHits = in.u32("localHits");
        long peerHits = in.u32("peerHits");
        long misses = in.u32("misses");
        long bytesLocal = in.u64("bytesLocal");
        long bytesPeer = in.u64("bytesPeer");
        long bytesStore = in.u64("bytesStore");
        long refetched = value.length > 36 ? in.u32("refetched") : 0;
        in.end("data stats");
        return new DataStats(localHits, peerHits, misses, bytesLocal, bytesPeer, bytesStore, refetched);
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

    private static byte[] bytes(ByteBuf b) {
        byte[] a = new byte[b.readableBytes()];
        b.readBytes(a);
        return a;
    }
}
