package io.falkon.protocol;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * The canonical text form of a message used by the golden vectors ({@code docs/protocol.md}
 * section 8): one {@code path = value} line per field in wire order. The C executor's tests
 * produce the same text, so the format is part of the spec.
 */
public final class MessageDump {
    private final StringBuilder sb = new StringBuilder();

    private MessageDump() {
    }

    public static String dump(Message m) {
        MessageDump d = new MessageDump();
        d.message(m);
        return d.sb.toString();
    }

    private void line(String path, String value) {
        sb.append(path).append(" = ").append(value).append('\n');
    }

    private void num(String path, long v) {
        line(path, Long.toString(v));
    }

    private void unsigned(String path, long v) {
        line(path, Long.toUnsignedString(v));
    }

    private void str(String path, String s) {
        line(path, quote(s.getBytes(StandardCharsets.UTF_8)));
    }

    private void bytes(String path, byte[] b) {
        line(path, quote(b));
    }

    /** Quotes bytes: printable ASCII as is, {@code \" \\ \n \r \t} escaped, the rest as {@code \xNN}. */
    public static String quote(byte[] b) {
        StringBuilder q = new StringBuilder(b.length + 2).append('"');
        for (byte x : b) {
            int c = x & 0xFF;
            switch (c) {
                case '"' -> q.append("\\\"");
                case '\\' -> q.append("\\\\");
                case '\n' -> q.append("\\n");
                case '\r' -> q.append("\\r");
                case '\t' -> q.append("\\t");
                default -> {
                    if (c >= 0x20 && c <= 0x7E) {
                        q.append((char) c);
                    } else {
                        q.append(String.format("\\x%02x", c));
                    }
                }
            }
        }
        return q.append('"').toString();
    }

    private void strList(String path, List<String> list) {
        num(path + ".count", list.size());
        for (int i = 0; i < list.size(); i++) {
            str(path + "[" + i + "]", list.get(i));
        }
    }

    private void map(String path, Map<String, String> map) {
        num(path + ".count", map.size());
        int i = 0;
        for (Map.Entry<String, String> e : map.entrySet()) {
            str(path + "[" + i + "].key", e.getKey());
            str(path + "[" + i + "].value", e.getValue());
            i++;
        }
    }

    private void ext(String path, List<ExtField> ext) {
        num(path + ".count", ext.size());
        for (int i = 0; i < ext.size(); i++) {
            num(path + "[" + i + "].tag", ext.get(i).tag());
            bytes(path + "[" + i + "].value", ext.get(i).value());
        }
    }

    private void spec(String path, byte[] blob) {
        TaskSpec s = TaskSpecCodec.decode(blob);
        strList(path + ".argv", s.argv());
        map(path + ".env", s.env());
        str(path + ".workDir", s.workDir());
        num(path + ".wallTimeMillis", s.wallTimeMillis());
        ext(path + ".ext", s.ext());
    }

    private void execution(String path, Execution e) {
        num(path + ".status", e.status().code());
        num(path + ".exitCode", e.exitCode());
        num(path + ".flags", e.flags());
        num(path + ".startedMicros", e.startedMicros());
        num(path + ".finishedMicros", e.finishedMicros());
        bytes(path + ".stdout", e.stdout());
        bytes(path + ".stderr", e.stderr());
        str(path + ".detail", e.detail());
        ext(path + ".ext", e.ext());
    }

    private void message(Message m) {
        line("type", m.type().name());
        switch (m.type()) {
            case HELLO -> {
                Message.Hello h = (Message.Hello) m;
                unsigned("magic", Integer.toUnsignedLong(h.magic()));
                num("version", h.version());
                num("role", h.role());
                str("token", h.token());
                str("agent", h.agent());
            }
            case WELCOME -> {
                Message.Welcome w = (Message.Welcome) m;
                num("version", w.version());
                num("heartbeatMillis", w.heartbeatMillis());
                num("maxFrameLength", w.maxFrameLength());
                str("dispatcherId", w.dispatcherId());
            }
            case HEARTBEAT -> num("timeMicros", ((Message.Heartbeat) m).timeMicros());
            case ERROR -> {
                Message.ErrorMessage e = (Message.ErrorMessage) m;
                num("requestId", e.requestId());
                num("code", e.code());
                str("message", e.message());
            }
            case REGISTER -> {
                Message.Register r = (Message.Register) m;
                str("executorId", r.executorId());
                str("host", r.host());
                num("slots", r.slots());
                unsigned("flags", Integer.toUnsignedLong(r.flags()));
                map("attributes", r.attributes());
            }
            case CREDIT -> num("credits", ((Message.Credit) m).credits());
            case DISPATCH -> {
                List<Message.DispatchedTask> tasks = ((Message.Dispatch) m).tasks();
                num("tasks.count", tasks.size());
                for (int i = 0; i < tasks.size(); i++) {
                    Message.DispatchedTask t = tasks.get(i);
                    String p = "tasks[" + i + "]";
                    unsigned(p + ".taskId", t.taskId());
                    num(p + ".attempt", t.attempt());
                    spec(p + ".spec", t.spec());
                    ext(p + ".ext", t.ext());
                }
            }
            case RESULT -> {
                Message.Result r = (Message.Result) m;
                num("credits", r.credits());
                num("results.count", r.results().size());
                for (int i = 0; i < r.results().size(); i++) {
                    Message.TaskResult t = r.results().get(i);
                    String p = "results[" + i + "]";
                    unsigned(p + ".taskId", t.taskId());
                    num(p + ".attempt", t.attempt());
                    execution(p + ".execution", t.execution());
                }
            }
            case CANCEL -> {
                long[] ids = ((Message.Cancel) m).taskIds();
                num("taskIds.count", ids.length);
                for (int i = 0; i < ids.length; i++) {
                    unsigned("taskIds[" + i + "]", ids[i]);
                }
            }
            case CACHE_UPDATE -> {
                Message.CacheUpdate c = (Message.CacheUpdate) m;
                num("full", c.full() ? 1 : 0);
                num("added.count", c.added().size());
                for (int i = 0; i < c.added().size(); i++) {
                    str("added[" + i + "].id", c.added().get(i).id());
                    num("added[" + i + "].size", c.added().get(i).size());
                }
                num("removed.count", c.removed().size());
                for (int i = 0; i < c.removed().size(); i++) {
                    str("removed[" + i + "]", c.removed().get(i));
                }
            }
            case REPLICATE -> {
                List<Message.Replica> objects = ((Message.Replicate) m).objects();
                num("objects.count", objects.size());
                for (int i = 0; i < objects.size(); i++) {
                    Message.Replica r = objects.get(i);
                    String p = "objects[" + i + "].";
                    str(p + "id", r.id());
                    str(p + "source", r.source());
                    num(p + "size", r.size());
                    str(p + "checksum", r.checksum());
                    num(p + "peers.count", r.peers().size());
                    for (int j = 0; j < r.peers().size(); j++) {
                        str(p + "peers[" + j + "]", r.peers().get(j));
                    }
                }
            }
            case RELEASE -> {
                List<String> ids = ((Message.Release) m).ids();
                num("ids.count", ids.size());
                for (int i = 0; i < ids.size(); i++) {
                    str("ids[" + i + "]", ids.get(i));
                }
            }
            case CREATE_INSTANCE -> {
                Message.CreateInstance c = (Message.CreateInstance) m;
                num("requestId", c.requestId());
                str("clientName", c.clientName());
                num("leaseSeconds", c.leaseSeconds());
            }
            case INSTANCE_CREATED -> {
                Message.InstanceCreated c = (Message.InstanceCreated) m;
                num("requestId", c.requestId());
                unsigned("instanceId", c.instanceId());
                str("secret", c.secret());
            }
            case SUBMIT -> {
                Message.Submit s = (Message.Submit) m;
                num("requestId", s.requestId());
                unsigned("instanceId", s.instanceId());
                num("tasks.count", s.tasks().size());
                for (int i = 0; i < s.tasks().size(); i++) {
                    Message.SubmittedTask t = s.tasks().get(i);
                    unsigned("tasks[" + i + "].clientTaskId", t.clientTaskId());
                    spec("tasks[" + i + "].spec", t.spec());
                }
            }
            case SUBMITTED -> {
                Message.Submitted s = (Message.Submitted) m;
                num("requestId", s.requestId());
                unsigned("instanceId", s.instanceId());
                num("accepted", s.accepted());
            }
            case DELIVER -> {
                Message.Deliver d = (Message.Deliver) m;
                unsigned("instanceId", d.instanceId());
                num("results.count", d.results().size());
                for (int i = 0; i < d.results().size(); i++) {
                    Message.DeliveredResult r = d.results().get(i);
                    String p = "results[" + i + "]";
                    unsigned(p + ".clientTaskId", r.clientTaskId());
                    unsigned(p + ".seq", r.seq());
                    num(p + ".attempt", r.attempt());
                    str(p + ".executorId", r.executorId());
                    num(p + ".submittedMicros", r.submittedMicros());
                    num(p + ".dispatchedMicros", r.dispatchedMicros());
                    num(p + ".completedMicros", r.completedMicros());
                    execution(p + ".execution", r.execution());
                }
            }
            case STATUS_REQUEST -> {
                Message.StatusRequest s = (Message.StatusRequest) m;
                num("requestId", s.requestId());
                unsigned("instanceId", s.instanceId());
            }
            case STATUS -> {
                Message.Status s = (Message.Status) m;
                num("requestId", s.requestId());
                str("json", s.json());
            }
            case DESTROY -> {
                Message.Destroy d = (Message.Destroy) m;
                num("requestId", d.requestId());
                unsigned("instanceId", d.instanceId());
            }
            case DESTROYED -> {
                Message.Destroyed d = (Message.Destroyed) m;
                num("requestId", d.requestId());
                unsigned("instanceId", d.instanceId());
                num("cancelled", d.cancelled());
            }
            case HALT -> {
                Message.Halt h = (Message.Halt) m;
                num("requestId", h.requestId());
                unsigned("instanceId", h.instanceId());
            }
            case HALTED -> {
                Message.Halted h = (Message.Halted) m;
                num("requestId", h.requestId());
                unsigned("instanceId", h.instanceId());
                num("cancelled", h.cancelled());
            }
            case CANCEL_TASKS -> {
                Message.CancelTasks c = (Message.CancelTasks) m;
                num("requestId", c.requestId());
                unsigned("instanceId", c.instanceId());
                num("clientTaskIds.count", c.clientTaskIds().length);
                for (int i = 0; i < c.clientTaskIds().length; i++) {
                    unsigned("clientTaskIds[" + i + "]", c.clientTaskIds()[i]);
                }
            }
            case TASKS_CANCELLED -> {
                Message.TasksCancelled c = (Message.TasksCancelled) m;
                num("requestId", c.requestId());
                unsigned("instanceId", c.instanceId());
                num("cancelled", c.cancelled());
            }
            case ATTACH -> {
                Message.Attach a = (Message.Attach) m;
                num("requestId", a.requestId());
                unsigned("instanceId", a.instanceId());
                str("secret", a.secret());
            }
            case ATTACH_MOVED -> {
                Message.AttachMoved a = (Message.AttachMoved) m;
                num("requestId", a.requestId());
                unsigned("instanceId", a.instanceId());
                str("secret", a.secret());
                num("movedClientTaskIds.count", a.movedClientTaskIds().length);
                for (int i = 0; i < a.movedClientTaskIds().length; i++) {
                    unsigned("movedClientTaskIds[" + i + "]", a.movedClientTaskIds()[i]);
                }
            }
            case ATTACHED -> {
                Message.Attached a = (Message.Attached) m;
                num("requestId", a.requestId());
                unsigned("instanceId", a.instanceId());
                num("highestClientTaskId", a.highestClientTaskId());
                num("redelivered", a.redelivered());
            }
            case ACK -> {
                Message.Ack a = (Message.Ack) m;
                unsigned("instanceId", a.instanceId());
                unsigned("upToSeq", a.upToSeq());
            }
            default -> throw new IllegalArgumentException("no dump for " + m.type());
        }
    }
}
