package io.falkon.protocol;

import io.netty.buffer.ByteBuf;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the field encodings of {@code docs/protocol.md} section 3 from a buffer, checking every
 * length against the bytes that are left so that no input can make it over-allocate. Errors are
 * {@link ProtocolException}s naming the field.
 */
public final class WireReader {
    private final ByteBuf buf;

    public WireReader(ByteBuf buf) {
        this.buf = buf;
    }

    public ByteBuf buffer() {
        return buf;
    }

    public int remaining() {
        return buf.readableBytes();
    }

    private void need(int n, String field) {
        if (buf.readableBytes() < n) {
            throw new ProtocolException(ErrorCode.MALFORMED,
                    field + ": truncated (needs " + n + " bytes, " + buf.readableBytes() + " left)");
        }
    }

    public int u8(String field) {
        need(1, field);
        return buf.readUnsignedByte();
    }

    public int u16(String field) {
        need(2, field);
        return buf.readUnsignedShort();
    }

    public long u32(String field) {
        need(4, field);
        return buf.readUnsignedInt();
    }

    /** A u32 that must fit in a Java int (counts, lengths, slots, attempts). */
    public int u31(String field) {
        long v = u32(field);
        if (v > Integer.MAX_VALUE) {
            throw new ProtocolException(ErrorCode.MALFORMED, field + ": " + v + " is over 2^31-1");
        }
        return (int) v;
    }

    public long u64(String field) {
        need(8, field);
        return buf.readLong();
    }

    public int i32(String field) {
        need(4, field);
        return buf.readInt();
    }

    public long i64(String field) {
        need(8, field);
        return buf.readLong();
    }

    /** A length or count, checked against the bytes left at {@code minBytesEach} per element. */
    public int count(String field, int minBytesEach) {
        int n = u31(field);
        if ((long) n * minBytesEach > buf.readableBytes()) {
            throw new ProtocolException(ErrorCode.MALFORMED, field + ": count " + n + " cannot fit in the "
                    + buf.readableBytes() + " bytes left");
        }
        return n;
    }

    public String str(String field) {
        int len = count(field, 1);
        String s = buf.toString(buf.readerIndex(), len, StandardCharsets.UTF_8);
        buf.skipBytes(len);
        return s;
    }

    /**
     * A string that must be valid UTF-8 (an object id, a path): refused as MALFORMED otherwise, rather
     * than read with replacement characters that could make two different byte strings one name.
     */
    public String utf8(String field) {
        int len = count(field, 1);
        byte[] b = new byte[len];
        buf.readBytes(b);
        String s = ObjectId.decode(b);
        if (s == null) {
            throw new ProtocolException(ErrorCode.MALFORMED, field + ": not valid UTF-8");
        }
        return s;
    }

    public byte[] blob(String field) {
        int len = count(field, 1);
        byte[] b = new byte[len];
        buf.readBytes(b);
        return b;
    }

    /** Skips a str or blob without copying it. */
    public void skipBlob(String field) {
        buf.skipBytes(count(field, 1));
    }

    public List<String> strList(String field) {
        int n = count(field, 4);
        List<String> list = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            list.add(str(field + "[" + i + "]"));
        }
        return list;
    }

    public Map<String, String> map(String field) {
        int n = count(field, 8);
        Map<String, String> map = new LinkedHashMap<>(Math.max(4, n * 2));
        for (int i = 0; i < n; i++) {
            String key = str(field + "[" + i + "].key");
            String value = str(field + "[" + i + "].value");
            if (map.put(key, value) != null) {
                throw new ProtocolException(ErrorCode.MALFORMED, field + ": duplicate key '" + key + "'");
            }
        }
        return map;
    }

    public List<ExtField> ext(String field) {
        int n = u16(field);
        if (n == 0) {
            return ExtField.NONE;
        }
        if ((long) n * 6 > buf.readableBytes()) {
            throw new ProtocolException(ErrorCode.MALFORMED, field + ": count " + n + " cannot fit");
        }
        List<ExtField> list = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int tag = u16(field + "[" + i + "].tag");
            list.add(new ExtField(tag, blob(field + "[" + i + "].value")));
        }
        return list;
    }

    /** Fails unless every byte has been consumed. */
    public void end(String what) {
        if (buf.isReadable()) {
            throw new ProtocolException(ErrorCode.MALFORMED,
                    what + ": " + buf.readableBytes() + " unexpected trailing bytes");
        }
    }
}
