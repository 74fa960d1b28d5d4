package io.falkon.dispatcher.journal;

import io.falkon.dispatcher.core.InstanceRecord;
import io.falkon.protocol.ErrorCode;
import io.falkon.protocol.Message;
import io.falkon.protocol.MessageCodec;
import io.falkon.protocol.ProtocolException;
import io.falkon.protocol.WireReader;
import io.falkon.protocol.WireWriter;
import io.netty.buffer.ByteBuf;

import java.util.function.Consumer;
import java.util.zip.CRC32C;

/**
 * The journal's record bodies (each framed on disk as {@code length:u32 crc32c:u32 body}):
 *
 * <pre>
 * INSTANCE  = 1 instanceId:u64 leaseSeconds:u32 createdMicros:i64 name:str secret:str
 *               accepted:list&lt;(from:u64 to:u64)&gt;   (client task id ranges; empty for a new instance)
 * ACCEPTED  = 2 instanceId:u64 clientTaskId:u64 submittedMicros:i64 spec:blob
 * COMPLETED = 3 instanceId:u64 clientTaskId:u64 seq:u64 attempt:u32 executorId:str
 *               submittedMicros:i64 dispatchedMicros:i64 completedMicros:i64 execution:Execution
 * ACKED     = 4 instanceId:u64 upToSeq:u64
 * DESTROYED = 5 instanceId:u64
 * PRODUCED  = 6 instanceId:u64 ok:u8 failedProducer:u64 objects:list&lt;str&gt; name:str   (empty: none)
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
    static final int PRODUCED = 6;

    private Records() {
    }

    /** Appends a framed record: reserves length and CRC, writes the body through {@code body}, fills both. */
    static void frame(ByteBuf out, Consumer<ByteBuf> body) {
        int at = out.writerIndex();
        out.writeInt(0);
        out.writeInt(0);
        body.accept(out);
        int len = out.writerIndex() - at - 8;
        CRC32C crc = new CRC32C();
        crc.update(out.nioBuffer(at + 8, len));
        out.setInt(at, len);
        out.setInt(at + 4, (int) crc.getValue());
    }

    static void instance(ByteBuf out, InstanceRecord r) {
        frame(out, b -> {
            b.writeByte(INSTANCE);
            b.writeLong(r.id());
            WireWriter.u32(b, r.leaseSeconds(), "leaseSeconds");
            b.writeLong(r.createdMicros());
            WireWriter.str(b, r.name());
            WireWriter.str(b, r.secret());
            long[] ranges = r.acceptedRanges();
            WireWriter.u32(b, ranges.length / 2, "accepted");
            for (long v : ranges) {
                b.writeLong(v);
            }
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

    static void produced(ByteBuf out, long instanceId, String[] objectIds, String name, boolean ok,
                         long failedProducer) {
        frame(out, b -> {
            b.writeByte(PRODUCED);
            b.writeLong(instanceId);
            b.writeByte(ok ? 1 : 0);
            b.writeLong(failedProducer);
            WireWriter.strList(b, objectIds == null ? java.util.List.of() : java.util.List.of(objectIds));
            WireWriter.str(b, name == null ? "" : name);
        });
    }

    private static Message.DeliveredResult result(WireReader in) {
        return new Message.DeliveredResult(in.u64("clientTaskId"), in.u64("seq"), in.u31("attempt"),
                in.str("executorId"), in.i64("submittedMicros"), in.i64("dispatchedMicros"), in.i64("completedMicros"),
                MessageCodec.decodeExecution(in));
    }

    /** Decodes the body of a COMPLETED record (the spill's only kind). */
    static Message.DeliveredResult completed(ByteBuf body) {
        WireReader in = new WireReader(body);
        int type = in.u8("type");
        if (type != COMPLETED) {
            throw new ProtocolException(ErrorCode.MALFORMED, "expected a COMPLETED record, found type " + type);
        }
        in.u64("instanceId");
        Message.DeliveredResult r = result(in);
        in.end("result record");
        return r;
    }

    /** Decodes one record body into calls on {@code to}. */
    static void apply(ByteBuf body, Replay to) {
        WireReader in = new WireReader(body);
        int type = in.u8("type");
        switch (type) {
            case INSTANCE -> {
                long id = in.u64("instanceId");
                long lease = in.u32("leaseSeconds");
                long created = in.i64("createdMicros");
                String name = in.str("name");
                String secret = in.str("secret");
                int n = in.count("accepted", 16);
                long[] ranges = new long[2 * n];
                for (int i = 0; i < ranges.length; i++) {
                    ranges[i] = in.u64("accepted range");
                }
                to.instance(new InstanceRecord(id, name, secret, lease, created, -1, ranges));
            }
            case ACCEPTED -> to.accepted(in.u64("instanceId"), in.u64("clientTaskId"), in.i64("submittedMicros"),
                    in.blob("spec"));
            case COMPLETED -> {
                long instanceId = in.u64("instanceId");
                to.completed(instanceId, result(in));
            }
            case ACKED -> to.acked(in.u64("instanceId"), in.u64("upToSeq"));
            case DESTROYED -> to.destroyed(in.u64("instanceId"));
            case PRODUCED -> {
                long instanceId = in.u64("instanceId");
                boolean ok = in.u8("ok") == 1;
                long failedProducer = in.u64("failedProducer");
                java.util.List<String> objects = in.strList("objects");
                String name = in.str("name");
                to.produced(instanceId, objects.isEmpty() ? null : objects.toArray(String[]::new),
                        name.isEmpty() ? null : name, ok, failedProducer);
            }
            default -> throw new ProtocolException(ErrorCode.MALFORMED, "unknown journal record type " + type);
        }
        in.end("journal record");
    }
}
