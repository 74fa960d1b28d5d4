package io.falkon.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

import java.util.List;
import java.util.Map;

/** Writes the field encodings of {@code docs/protocol.md} section 3. */
public final class WireWriter {
    private WireWriter() {
    }

    public static void u32(ByteBuf out, long v, String field) {
        if (v < 0 || v > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException(field + ": " + v + " does not fit in u32");
        }
        out.writeInt((int) v);
    }

    public static void u16(ByteBuf out, int v, String field) {
        if (v < 0 || v > 0xFFFF) {
            throw new IllegalArgumentException(field + ": " + v + " does not fit in u16");
        }
        out.writeShort(v);
    }

    public static void u8(ByteBuf out, int v, String field) {
        if (v < 0 || v > 0xFF) {
            throw new IllegalArgumentException(field + ": " + v + " does not fit in u8");
        }
        out.writeByte(v);
    }

    public static void str(ByteBuf out, String s) {
        int at = out.writerIndex();
        out.writeInt(0);
        int n = ByteBufUtil.writeUtf8(out, s);
        out.setInt(at, n);
    }

    public static void blob(ByteBuf out, byte[] b) {
        out.writeInt(b.length);
        out.writeBytes(b);
    }

    public static void strList(ByteBuf out, List<String> list) {
        out.writeInt(list.size());
        for (int i = 0, n = list.size(); i < n; i++) {
            str(out, list.get(i));
        }
    }

    public static void map(ByteBuf out, Map<String, String> map) {
        out.writeInt(map.size());
        for (Map.Entry<String, String> e : map.entrySet()) {
            str(out, e.getKey());
            str(out, e.getValue());
        }
    }

    public static void ext(ByteBuf out, List<ExtField> ext) {
        u16(out, ext.size(), "ext count");
        for (ExtField f : ext) {
            out.writeShort(f.tag());
            blob(out, f.value());
        }
    }
}
