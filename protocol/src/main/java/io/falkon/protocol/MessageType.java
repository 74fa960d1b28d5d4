package io.falkon.protocol;

/** Frame type codes (the {@code type:u8} after the length prefix). */
public enum MessageType {
    HELLO(0x01),
    WELCOME(0x02),
    HEARTBEAT(0x03),
    ERROR(0x04),
    REGISTER(0x10),
    CREDIT(0x11),
    DISPATCH(0x12),
    RESULT(0x13),
    CANCEL(0x14),
    CACHE_UPDATE(0x15),
    RELEASE(0x16),
    REPLICATE(0x17),
    CREATE_INSTANCE(0x20),
    INSTANCE_CREATED(0x21),
    SUBMIT(0x22),
    SUBMITTED(0x23),
    DELIVER(0x24),
    STATUS_REQUEST(0x25),
    STATUS(0x26),
    DESTROY(0x27),
    DESTROYED(0x28),
    ATTACH(0x29),
    ATTACHED(0x2A),
    ACK(0x2B),
    HALT(0x2C),
    HALTED(0x2D),
    CANCEL_TASKS(0x2E),
    TASKS_CANCELLED(0x2F),
    ATTACH_MOVED(0x30);

    private static final MessageType[] BY_CODE = new MessageType[256];

    static {
        for (MessageType t : values()) {
            BY_CODE[t.code] = t;
        }
    }

    private final int code;

    MessageType(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The type with this code, or {@code null} if the code is not defined. */
    public static MessageType of(int code) {
        return code >= 0 && code < 256 ? BY_CODE[code] : null;
    }
}
