package io.falkon.protocol;

import io.netty.buffer.ByteBuf;

import java.util.ArrayList;
import java.util.List;

import static io.falkon.protocol.WireWriter.blob;
import static io.falkon.protocol.WireWriter.ext;
import static io.falkon.protocol.WireWriter.str;
import static io.falkon.protocol.WireWriter.u16;
import static io.falkon.protocol.WireWriter.u32;
import static io.falkon.protocol.WireWriter.u8;

/**
 * Encodes messages to frames and decodes frames to messages, exactly as {@code docs/protocol.md}
 * section 4 lays them out. Stateless and thread-safe.
 */
public final class MessageCodec {
    private MessageCodec() {
    }

    /** Writes a whole frame: the u32 length prefix, the type and the body. */
    public static void encodeFrame(Message m, ByteBuf out) {
        int at = out.writerIndex();
        out.writeInt(0);
        encode(m, out);
        out.setInt(at, out.writerIndex() - at - 4);
    }

    /** Writes the type byte and the body (a frame without its length prefix). */
    public static void encode(Message m, ByteBuf out) {
        out.writeByte(m.type().code());
        encodeBody(m, out);
    }

    private static void encodeBody(Message m, ByteBuf out) {
        switch (m.type()) {
            case HELLO: {
                Message.Hello h = (Message.Hello) m;
                out.writeInt(h.magic());
                u16(out, h.version(), "version");
                u8(out, h.role(), "role");
                str(out, h.token());
                str(out, h.agent());
                return;
            }
            case WELCOME: {
                Message.Welcome w = (Message.Welcome) m;
                u16(out, w.version(), "version");
                u32(out, w.heartbeatMillis(), "heartbeatMillis");
                u32(out, w.maxFrameLength(), "maxFrameLength");
                str(out, w.dispatcherId());
                return;
            }
            case HEARTBEAT: {
                Message.Heartbeat hb = (Message.Heartbeat) m;
                out.writeLong(hb.timeMicros());
                return;
            }
            case ERROR: {
                Message.ErrorMessage e = (Message.ErrorMessage) m;
                u32(out, e.requestId(), "requestId");
                u16(out, e.code(), "code");
                str(out, e.message());
                return;
            }
            case REGISTER: {
                Message.Register r = (Message.Register) m;
                str(out, r.executorId());
                str(out, r.host());
                u32(out, r.slots(), "slots");
                u32(out, Integer.toUnsignedLong(r.flags()), "flags");
                WireWriter.map(out, r.attributes());
                return;
            }
            case CREDIT: {
                Message.Credit c = (Message.Credit) m;
                u32(out, c.credits(), "credits");
                return;
            }
            case DISPATCH: {
                Message.Dispatch d = (Message.Dispatch) m;
                List<Message.DispatchedTask> tasks = d.tasks();
                out.writeInt(tasks.size());
                for (int i = 0, n = tasks.size(); i < n; i++) {
                    Message.DispatchedTask t = tasks.get(i);
                    out.writeLong(t.taskId());
                    u32(out, t.attempt(), "attempt");
                    blob(out, t.spec());
                    ext(out, t.ext());
                }
                return;
            }
            case RESULT: {
                Message.Result r = (Message.Result) m;
                u32(out, r.credits(), "credits");
                List<Message.TaskResult> results = r.results();
                out.writeInt(results.size());
                for (int i = 0, n = results.size(); i < n; i++) {
                    Message.TaskResult t = results.get(i);
                    out.writeLong(t.taskId());
                    u32(out, t.attempt(), "attempt");
                    encodeExecution(t.execution(), out);
                }
                return;
            }
            case CANCEL: {
                Message.Cancel c = (Message.Cancel) m;
                out.writeInt(c.taskIds().length);
                for (long id : c.taskIds()) {
                    out.writeLong(id);
                }
                return;
            }
            case CACHE_UPDATE: {
                Message.CacheUpdate c = (Message.CacheUpdate) m;
                out.writeByte(c.full() ? 1 : 0);
                out.writeInt(c.added().size());
                for (Message.CachedObject o : c.added()) {
                    str(out, o.id());
                    out.writeLong(o.size());
                }
                out.writeInt(c.removed().size());
                for (String id : c.removed()) {
                    str(out, id);
                }
                return;
            }
            case REPLICATE: {
                List<Message.Replica> objects = ((Message.Replicate) m).objects();
                out.writeInt(objects.size());
                for (Message.Replica r : objects) {
                    str(out, r.id());
                    str(out, r.source());
                    out.writeLong(r.size());
                    str(out, r.checksum());
                    out.writeInt(r.peers().size());
                    for (String p : r.peers()) {
                        str(out, p);
                    }
                }
                return;
            }
            case RELEASE: {
                List<String> ids = ((Message.Release) m).ids();
                out.writeInt(ids.size());
                for (String id : ids) {
                    str(out, id);
                }
                return;
            }
            case CREATE_INSTANCE: {
                Message.CreateInstance c = (Message.CreateInstance) m;
                u32(out, c.requestId(), "requestId");
                str(out, c.clientName());
                u32(out, c.leaseSeconds(), "leaseSeconds");
                return;
            }
            case INSTANCE_CREATED: {
                Message.InstanceCreated c = (Message.InstanceCreated) m;
                u32(out, c.requestId(), "requestId");
                out.writeLong(c.instanceId());
                str(out, c.secret());
                return;
            }
            case SUBMIT: {
                Message.Submit s = (Message.Submit) m;
                u32(out, s.requestId(), "requestId");
                out.writeLong(s.instanceId());
                List<Message.SubmittedTask> tasks = s.tasks();
                out.writeInt(tasks.size());
                for (int i = 0, n = tasks.size(); i < n; i++) {
                    Message.SubmittedTask t = tasks.get(i);
                    out.writeLong(t.clientTaskId());
                    blob(out, t.spec());
                }
                return;
            }
            case SUBMITTED: {
                Message.Submitted s = (Message.Submitted) m;
                u32(out, s.requestId(), "requestId");
                out.writeLong(s.instanceId());
                u32(out, s.accepted(), "accepted");
                return;
            }
            case DELIVER: {
                Message.Deliver d = (Message.Deliver) m;
                out.writeLong(d.instanceId());
                List<Message.DeliveredResult> results = d.results();
                out.writeInt(results.size());
                for (int i = 0, n = results.size(); i < n; i++) {
                    Message.DeliveredResult r = results.get(i);
                    out.writeLong(r.clientTaskId());
                    out.writeLong(r.seq());
                    u32(out, r.attempt(), "attempt");
                    str(out, r.executorId());
                    out.writeLong(r.submittedMicros());
                    out.writeLong(r.dispatchedMicros());
                    out.writeLong(r.completedMicros());
                    encodeExecution(r.execution(), out);
                }
                return;
            }
            case STATUS_REQUEST: {
                Message.StatusRequest s = (Message.StatusRequest) m;
                u32(out, s.requestId(), "requestId");
                out.writeLong(s.instanceId());
                return;
            }
            case STATUS: {
                Message.Status s = (Message.Status) m;
                u32(out, s.requestId(), "requestId");
                str(out, s.json());
                return;
            }
            case DESTROY: {
                Message.Destroy d = (Message.Destroy) m;
                u32(out, d.requestId(), "requestId");
                out.writeLong(d.instanceId());
                return;
            }
            case DESTROYED: {
                Message.Destroyed d = (Message.Destroyed) m;
                u32(out, d.requestId(), "requestId");
                out.writeLong(d.instanceId());
                u32(out, d.cancelled(), "cancelled");
                return;
            }
            case HALT: {
                Message.Halt h = (Message.Halt) m;
                u32(out, h.requestId(), "requestId");
                out.writeLong(h.instanceId());
                return;
            }
            case HALTED: {
                Message.Halted h = (Message.Halted) m;
                u32(out, h.requestId(), "requestId");
                out.writeLong(h.instanceId());
                u32(out, h.cancelled(), "cancelled");
                return;
            }
            case CANCEL_TASKS: {
                Message.CancelTasks c = (Message.CancelTasks) m;
                u32(out, c.requestId(), "requestId");
                out.writeLong(c.instanceId());
                out.writeInt(c.clientTaskIds().length);
                for (long id : c.clientTaskIds()) {
                    out.writeLong(id);
                }
                return;
            }
            case TASKS_CANCELLED: {
                Message.TasksCancelled c = (Message.TasksCancelled) m;
                u32(out, c.requestId(), "requestId");
                out.writeLong(c.instanceId());
                u32(out, c.cancelled(), "cancelled");
                return;
            }
            case ATTACH: {
                Message.Attach a = (Message.Attach) m;
                u32(out, a.requestId(), "requestId");
                out.writeLong(a.instanceId());
                str(out, a.secret());
                return;
            }
            case ATTACH_MOVED: {
                Message.AttachMoved a = (Message.AttachMoved) m;
                u32(out, a.requestId(), "requestId");
                out.writeLong(a.instanceId());
                str(out, a.secret());
                out.writeInt(a.movedClientTaskIds().length);
                for (long id : a.movedClientTaskIds()) {
                    out.writeLong(id);
                }
                return;
            }
            case ATTACHED: {
                Message.Attached a = (Message.Attached) m;
                u32(out, a.requestId(), "requestId");
                out.writeLong(a.instanceId());
                out.writeLong(a.highestClientTaskId());
                u32(out, a.redelivered(), "redelivered");
                return;
            }
            case ACK: {
                Message.Ack a = (Message.Ack) m;
                out.writeLong(a.instanceId());
                out.writeLong(a.upToSeq());
                return;
            }
            default:
                throw new IllegalArgumentException("unknown message " + m.getClass());
        }
    }

    public static void encodeExecution(Execution e, ByteBuf out) {
        out.writeByte(e.status().code());
        out.writeInt(e.exitCode());
        out.writeByte(e.flags());
        out.writeLong(e.startedMicros());
        out.writeLong(e.finishedMicros());
        blob(out, e.stdout());
        blob(out, e.stderr());
        str(out, e.detail());
        ext(out, e.ext());
    }

    /**
     * Decodes one frame without its length prefix (type byte and body), consuming it entirely.
     *
     * @throws ProtocolException naming the message and field that is wrong
     */
    public static Message decode(ByteBuf frame) {
        WireReader in = new WireReader(frame);
        int code = in.u8("type");
        MessageType type = MessageType.of(code);
        if (type == null) {
            throw new ProtocolException(ErrorCode.MALFORMED, "unknown message type 0x" + Integer.toHexString(code));
        }
        Message m;
        try {
            m = decodeBody(type, in);
            in.end(type.name());
        } catch (ProtocolException e) {
            throw e.getMessage().startsWith(type.name()) ? e : e.within(type.name() + ".");
        }
        return m;
    }

    private static Message decodeBody(MessageType type, WireReader in) {
        switch (type) {
            case HELLO: {
                int magic = in.i32("magic");
                if (magic != Protocol.MAGIC) {
                    throw new ProtocolException(ErrorCode.MALFORMED,
                            "magic: 0x" + Integer.toHexString(magic) + " is not 0x46414c4b (\"FALK\")");
                }
                return new Message.Hello(magic, in.u16("version"), in.u8("role"), in.str("token"), in.str("agent"));
            }
            case WELCOME:
                return new Message.Welcome(in.u16("version"), in.u32("heartbeatMillis"), in.u31("maxFrameLength"),
                        in.str("dispatcherId"));
            case HEARTBEAT:
                return new Message.Heartbeat(in.i64("timeMicros"));
            case ERROR:
                return new Message.ErrorMessage(in.u32("requestId"), in.u16("code"), in.str("message"));
            case REGISTER:
                return new Message.Register(in.str("executorId"), in.str("host"), in.u31("slots"),
                        (int) in.u32("flags"), in.map("attributes"));
            case CREDIT:
                return new Message.Credit(in.u31("credits"));
            case DISPATCH: {
                int n = in.count("tasks", 22);
                List<Message.DispatchedTask> tasks = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    try {
                        tasks.add(new Message.DispatchedTask(in.u64("taskId"), in.u31("attempt"), in.blob("spec"),
                                in.ext("ext")));
                    } catch (ProtocolException e) {
                        throw e.within("tasks[" + i + "].");
                    }
                }
                return new Message.Dispatch(tasks);
            }
            case RESULT: {
                int credits = in.u31("credits");
                int n = in.count("results", 12);
                List<Message.TaskResult> results = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    try {
                        results.add(new Message.TaskResult(in.u64("taskId"), in.u31("attempt"), decodeExecution(in)));
                    } catch (ProtocolException e) {
                        throw e.within("results[" + i + "].");
                    }
                }
                return new Message.Result(credits, results);
            }
            case CANCEL: {
                int n = in.count("taskIds", 8);
                long[] ids = new long[n];
                for (int i = 0; i < n; i++) {
                    ids[i] = in.u64("taskIds[" + i + "]");
                }
                return new Message.Cancel(ids);
            }
            case CACHE_UPDATE: {
                int full = in.u8("full");
                if (full > 1) {
                    throw new ProtocolException(ErrorCode.MALFORMED, "full: must be 0 or 1, got " + full);
                }
                int n = in.count("added", 12);
                List<Message.CachedObject> added = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    added.add(new Message.CachedObject(in.str("added[" + i + "].id"), in.i64("added[" + i + "].size")));
                }
                int r = in.count("removed", 4);
                List<String> removed = new ArrayList<>(r);
                for (int i = 0; i < r; i++) {
                    removed.add(in.str("removed[" + i + "]"));
                }
                return new Message.CacheUpdate(full == 1, added, removed);
            }
            case REPLICATE: {
                int n = in.count("objects", 24);
                List<Message.Replica> objects = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    String p = "objects[" + i + "].";
                    String id = in.str(p + "id");
                    String source = in.str(p + "source");
                    long size = in.i64(p + "size");
                    String checksum = in.str(p + "checksum");
                    int k = in.count(p + "peers", 4);
                    List<String> peers = new ArrayList<>(k);
                    for (int j = 0; j < k; j++) {
                        peers.add(in.str(p + "peers[" + j + "]"));
                    }
                    objects.add(new Message.Replica(id, source, size, checksum, peers));
                }
                return new Message.Replicate(objects);
            }
            case RELEASE: {
                int n = in.count("ids", 4);
                List<String> ids = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    ids.add(in.str("ids[" + i + "]"));
                }
                return new Message.Release(ids);
            }
            case CREATE_INSTANCE:
                return new Message.CreateInstance(in.u32("requestId"), in.str("clientName"), in.u32("leaseSeconds"));
            case INSTANCE_CREATED:
                return new Message.InstanceCreated(in.u32("requestId"), in.u64("instanceId"), in.str("secret"));
            case SUBMIT: {
                long requestId = in.u32("requestId");
                long instanceId = in.u64("instanceId");
                int n = in.count("tasks", 12);
                List<Message.SubmittedTask> tasks = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    try {
                        tasks.add(new Message.SubmittedTask(in.u64("clientTaskId"), in.blob("spec")));
                    } catch (ProtocolException e) {
                        throw e.within("tasks[" + i + "].");
                    }
                }
                return new Message.Submit(requestId, instanceId, tasks);
            }
            case SUBMITTED:
                return new Message.Submitted(in.u32("requestId"), in.u64("instanceId"), in.u31("accepted"));
            case DELIVER: {
                long instanceId = in.u64("instanceId");
                int n = in.count("results", 48);
                List<Message.DeliveredResult> results = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    try {
                        results.add(new Message.DeliveredResult(in.u64("clientTaskId"), in.u64("seq"), in.u31("attempt"),
                                in.str("executorId"), in.i64("submittedMicros"), in.i64("dispatchedMicros"),
                                in.i64("completedMicros"), decodeExecution(in)));
                    } catch (ProtocolException e) {
                        throw e.within("results[" + i + "].");
                    }
                }
                return new Message.Deliver(instanceId, results);
            }
            case STATUS_REQUEST:
                return new Message.StatusRequest(in.u32("requestId"), in.u64("instanceId"));
            case STATUS:
                return new Message.Status(in.u32("requestId"), in.str("json"));
            case DESTROY:
                return new Message.Destroy(in.u32("requestId"), in.u64("instanceId"));
            case DESTROYED:
                return new Message.Destroyed(in.u32("requestId"), in.u64("instanceId"), in.u31("cancelled"));
            case HALT:
                return new Message.Halt(in.u32("requestId"), in.u64("instanceId"));
            case HALTED:
                return new Message.Halted(in.u32("requestId"), in.u64("instanceId"), in.u31("cancelled"));
            case CANCEL_TASKS: {
                long requestId = in.u32("requestId");
                long instanceId = in.u64("instanceId");
                int n = in.count("clientTaskIds", 8);
                long[] ids = new long[n];
                for (int i = 0; i < n; i++) {
                    ids[i] = in.u64("clientTaskIds[" + i + "]");
                }
                return new Message.CancelTasks(requestId, instanceId, ids);
            }
            case TASKS_CANCELLED:
                return new Message.TasksCancelled(in.u32("requestId"), in.u64("instanceId"), in.u31("cancelled"));
            case ATTACH:
                return new Message.Attach(in.u32("requestId"), in.u64("instanceId"), in.str("secret"));
            case ATTACH_MOVED: {
                long requestId = in.u32("requestId");
                long instanceId = in.u64("instanceId");
                String secret = in.str("secret");
                int n = in.count("movedClientTaskIds", 8);
                long[] ids = new long[n];
                for (int i = 0; i < n; i++) {
                    ids[i] = in.u64("movedClientTaskIds[" + i + "]");
                }
                return new Message.AttachMoved(requestId, instanceId, secret, ids);
            }
            case ATTACHED:
                return new Message.Attached(in.u32("requestId"), in.u64("instanceId"), in.i64("highestClientTaskId"),
                        in.u31("redelivered"));
            case ACK:
                return new Message.Ack(in.u64("instanceId"), in.u64("upToSeq"));
            default:
                throw new ProtocolException(ErrorCode.MALFORMED, "no decoder for " + type);
        }
    }

    public static Execution decodeExecution(WireReader in) {
        int code = in.u8("execution.status");
        TaskStatus status = TaskStatus.of(code);
        if (status == null) {
            throw new ProtocolException(ErrorCode.MALFORMED, "execution.status: unknown value " + code);
        }
        return new Execution(status, in.i32("execution.exitCode"), in.u8("execution.flags"),
                in.i64("execution.startedMicros"), in.i64("execution.finishedMicros"), in.blob("execution.stdout"),
                in.blob("execution.stderr"), in.str("execution.detail"), in.ext("execution.ext"));
    }
}
