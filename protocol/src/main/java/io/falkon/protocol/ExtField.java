package io.falkon.protocol;

import java.util.Arrays;
import java.util.List;

/** One {@code ext} field: a tag and its opaque value. Unknown tags are carried unchanged. */
public record ExtField(int tag, byte[] value) {
    public static final List<ExtField> NONE = List.of();

    public ExtField {
        if (tag < 0 || tag > 0xFFFF) {
            throw new IllegalArgumentException("ext tag out of range: " + tag);
        }
        value = value.clone();
    }

    @Override
    public byte[] value() {
        return value.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ExtField f && f.tag == tag && Arrays.equals(f.value, value);
    }

    @Override
    public int hashCode() {
        return 31 * tag + Arrays.hashCode(value);
    }

    @Override
    public String toString() {
        return "ExtField[tag=" + tag + ", " + value.length + " bytes]";
    }
}
