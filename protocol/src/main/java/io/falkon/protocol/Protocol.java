package io.falkon.protocol;

/** Constants of the wire protocol; see {@code docs/protocol.md}. */
public final class Protocol {
    /** {@code HELLO.magic}: ASCII "FALK". */
    public static final int MAGIC = 0x46414C4B;
    /** The protocol version this implementation speaks. */
    public static final int VERSION = 2;
    /** Default TCP port of the dispatcher. */
    public static final int DEFAULT_PORT = 50500;
    /** Default maximum frame length (length field value), 16 MiB. */
    public static final int DEFAULT_MAX_FRAME_LENGTH = 16 * 1024 * 1024;

    /** {@code HELLO.role} of an executor. */
    public static final int ROLE_EXECUTOR = 1;
    /** {@code HELLO.role} of a client. */
    public static final int ROLE_CLIENT = 2;

    /** {@code REGISTER.flags}: the executor completes tasks without running them. */
    public static final int REGISTER_NO_EXEC = 1;

    private Protocol() {
    }
}
