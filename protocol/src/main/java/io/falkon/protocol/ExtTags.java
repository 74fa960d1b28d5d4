package io.falkon.protocol;

/**
 * Allocated {@code ext} tags ({@code docs/protocol.md} section 6). Tags 0x8000-0xFFFF are for private
 * experiments and never allocated here.
 */
public final class ExtTags {
    /**
     * In a TaskSpec: {@code u8}, how many times the dispatcher may re-dispatch the task after a
     * framework failure (lost executor, rejection, fetch failure, dispatch timeout). Absent: the
     * dispatcher's default (3).
     */
    public static final int RETRIES = 0x0001;

    private ExtTags() {
    }
}
