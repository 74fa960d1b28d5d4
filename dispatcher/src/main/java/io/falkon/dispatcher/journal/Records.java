package io.falkon.dispatcher.journal;

import io.falkon.protocol.Message;
import io.falkon.protocol.MessageCodec;
import io.falkon.protocol.WireReader;
import io.falkon.protocol.WireWriter;
import io.netty.buffer.ByteBuf;

/**
 * The journal's record bodies (each framed on disk as {@code length:u32 crc32c:u32 body}):
 *
 * <pre>
 * INSTANCE  = 1 instanceId:u64 leaseSeconds:u32 createdMicros:i64 highestClientTaskId:i64 name:str
 * ACCEPTED  = 2 instanceId:u64 clientTaskId:u64 submittedMicros:i64 spec:blob
 * COMPLETED = 3 instanceId:u64 clientTaskId:u64 seq:u64 attempt:u32 executorId:str
 *               submittedMicros:i64 dispatchedMicros:i64 completedMicros:i64 execution:Execution
 * ACKED     = 4 instanceId:u64 upToSeq:u64
 * DESTROYED = 5 instanceId:u64
 * </pre>
 *
 * Field encodings are the wire protocol's (docs/protocol.md section 3).
 */
final class Records {
    static final int INSTANCE = 1;
    static final int ACCEPTED = 2;
    static final int COMPLETED = 3;
    static final int ACKED = 4;
    static final int DESTROYED = 5;

    private Records() {
    }

    /** Appends a framed record: reserves length and CRC, writes the body through {@code body}, fills both. */
    static void frame(ByteBuf out, java.util.function.Consumer<ByteBuf> body) {
        int at = out.writerIndex();
        out.writeInt(0);
        out.writeInt(0);
        body.accept(out);
        int len = out.writerIndex() - at - 8;
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(out.nioBuffer(at + 8, len));
        out.setInt(at, len);
        out.setInt(at + 4, (int) crc.getValue());
    }

    static void instance(ByteBuf out, long instanceId, String name, long leaseSeconds, long createdMicros,
                         long highestClientTaskId) {
        frame(out, b -> {
            b.writeByte(INSTANCE);
            b.writeLong(instanceId);
            WireWriter.u32(b, leaseSeconds, "leaseSeconds");
            b.writeLong(createdMicros);
            b.writeLong(highestClientTaskId);
            WireWriter.str(b, name);
        });
    }

    static void accepted(ByteBuf out, long instanceId, long clientTaskId, long submittedMicros, byte[] spec) {
        frame(out, b -> {
            b.writeByte(ACCEPTED);
            b.writeLong(instanceId);
            b.writeLong(clientTaskId);
            b.writeLong(submittedMicros);
            WireWriter.blob(b, spec);
        });
    }

    static void completed(ByteBuf out, long instanceId, Message.DeliveredResult r) {
        frame(out, b -> {
            b.writeByte(COMPLETED);
            b.writeLong(instanceId);
            b.writeLong(r.clientTaskId());
            b.writeLong(r.seq());
            WireWriter.u32(b, r.attempt(), "attempt");
            WireWriter.str(b, r.executorId());
            b.writeLong(r.submittedMicros());
            b.writeLong(r.dispatchedMicros());
            b.writeLong(r.completedMicros());
            MessageCodec.encodeExecution(r.execution(), b);
        });
    }

    static void acked(ByteBuf out, long instanceId, long upToSeq) {
        frame(out, b -> {
            b.writeByte(ACKED);
            b.writeLong(instanceId);
            b.writeLong(upToSeq);
        });
    }

    static void destroyed(ByteBuf out, long instanceId) {
        frame(out, b -> {
            b.writeByte(DESTROYED);
            b.writeLong(instanceId);
        });
    }

    /** Decodes one record body into calls on {@code to}. */
    static void apply(ByteBuf body, Replay to) {
        WireReader in = new WireReader(body);
        int type = in.u8("type");
        switch (type) {
            case INSTANCE -> to.instance(in.u64("instanceId"), in.u32("leaseSeconds"), in.i64("createdMicros"),
                    in.i64("highestClientTaskId"), in.str("name"));
            case ACCEPTED -> to.accepted(in.u64("instanceId"), in.u64("clientTaskId"), in.i64("submittedMicros"),
                    in.blob("spec"));
            case COMPLETED -> {
                long instanceId = in.u64("instanceId");
                to.completed(instanceId, new Message.DeliveredResult(in.u64("clientTaskId"), in.u64("seq"),
                        in.u31("attempt"), in.str("executorId"), in.i64("submittedMicros"), in.i64("dispatchedMicros"),
                        in.i64("completedMicros"), MessageCodec.decodeExecution(in)));
            }
            case ACKED -> to.acked(in.u64("instanceId"), in.u64("upToSeq"));
            case DESTROYED -> to.destroyed(in.u64("instanceId"));
            default -> throw new io.falkon.protocol.ProtocolException(io.falkon.protocol.ErrorCode.MALFORMED,
                    "unknown journal record type " + type);
        }
        in.end("journal record");
    }
}
