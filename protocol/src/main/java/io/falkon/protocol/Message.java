package io.falkon.protocol;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A protocol message: one frame's type and body (see {@code docs/protocol.md}, section 4).
 * Task specs travel as encoded {@code byte[]} (see {@link TaskSpecCodec}) so the dispatcher can
 * queue and forward them without decoding.
 */
public sealed interface Message {

    MessageType type();

    // ---- 4.1 connection ------------------------------------------------------------------

    record Hello(int magic, int version, int role, String token, String agent) implements Message {
        public static Hello of(int role, String token, String agent) {
            return new Hello(Protocol.MAGIC, Protocol.VERSION, role, token, agent);
        }

        public MessageType type() {
            return MessageType.HELLO;
        }
    }

    record Welcome(int version, long heartbeatMillis, int maxFrameLength, String dispatcherId) implements Message {
        public MessageType type() {
            return MessageType.WELCOME;
        }
    }

    record Heartbeat(long timeMicros) implements Message {
        public MessageType type() {
            return MessageType.HEARTBEAT;
        }
    }

    /** ERROR; {@code code} is the raw wire value, see {@link ErrorCode#of}. */
    record ErrorMessage(long requestId, int code, String message) implements Message {
        public static ErrorMessage of(long requestId, ErrorCode code, String message) {
            return new ErrorMessage(requestId, code.code(), message);
        }

        public ErrorCode errorCode() {
            return ErrorCode.of(code);
        }

        public MessageType type() {
            return MessageType.ERROR;
        }
    }

    // ---- 4.2 executor --------------------------------------------------------------------

    record Register(String executorId, String host, int slots, int flags, Map<String, String> attributes)
            implements Message {
        public Register {
            attributes = Collections.unmodifiableMap(new LinkedHashMap<>(attributes));
        }

        public boolean noExec() {
            return (flags & Protocol.REGISTER_NO_EXEC) != 0;
        }

        public MessageType type() {
            return MessageType.REGISTER;
        }
    }

    record Credit(int credits) implements Message {
        public MessageType type() {
            return MessageType.CREDIT;
        }
    }

    record Dispatch(List<DispatchedTask> tasks) implements Message {
        public MessageType type() {
            return MessageType.DISPATCH;
        }
    }

    /** One task of a DISPATCH bundle; {@code spec} is an encoded {@link TaskSpec}. */
    record DispatchedTask(long taskId, int attempt, byte[] spec, List<ExtField> ext) {
    }

    record Result(int credits, List<TaskResult> results) implements Message {
        public MessageType type() {
            return MessageType.RESULT;
        }
    }

    record TaskResult(long taskId, int attempt, Execution execution) {
    }

    record Cancel(long[] taskIds) implements Message {
        public MessageType type() {
            return MessageType.CANCEL;
        }
    }

    /**
     * CACHE_UPDATE: objects the executor's cache gained and lost since its last update; with
     * {@code full} the complete contents, replacing what the dispatcher knew.
     */
    record CacheUpdate(boolean full, List<CachedObject> added, List<String> removed) implements Message {
        public MessageType type() {
            return MessageType.CACHE_UPDATE;
        }
    }

    record CachedObject(String id, long size) {
    }

    /**
     * REPLICATE: objects the executor should fetch into its cache now, ahead of the tasks that will
     * read them (a multicast along a tree of executors): each from the peers named, in order, else
     * from the store; verified as any fetch. A copy that arrives is reported with CACHE_UPDATE.
     */
    record Replicate(List<Replica> objects) implements Message {
        public MessageType type() {
            return MessageType.REPLICATE;
        }
    }

    /** One object of a REPLICATE: as a task's input declares it, and the peers to fetch it from. */
    record Replica(String id, String source, long size, String checksum, List<String> peers) {
    }

    /**
     * RELEASE: temporary outputs the executor holds (an Execution's HELD) that no task still needs
     * from it: it may evict them now like any cached object.
     */
    record Release(List<String> ids) implements Message {
        public MessageType type() {
            return MessageType.RELEASE;
        }
    }

    // ---- 4.3 client ----------------------------------------------------------------------

    /** CREATE_INSTANCE; the instance outlives its connection by {@code leaseSeconds} (0: not at all). */
    record CreateInstance(long requestId, String clientName, long leaseSeconds) implements Message {
        public MessageType type() {
            return MessageType.CREATE_INSTANCE;
        }
    }

    /**
     * INSTANCE_CREATED: the new instance's id and its secret, which a client needs besides the id to
     * take the instance over later (ATTACH). Neither is logged in full by Falkon.
     */
    record InstanceCreated(long requestId, long instanceId, String secret) implements Message {
        public MessageType type() {
            return MessageType.INSTANCE_CREATED;
        }
    }

    record Submit(long requestId, long instanceId, List<SubmittedTask> tasks) implements Message {
        public MessageType type() {
            return MessageType.SUBMIT;
        }
    }

    /** One task of a SUBMIT bundle; {@code spec} is an encoded {@link TaskSpec}. */
    record SubmittedTask(long clientTaskId, byte[] spec) {
    }

    record Submitted(long requestId, long instanceId, int accepted) implements Message {
        public MessageType type() {
            return MessageType.SUBMITTED;
        }
    }

    record Deliver(long instanceId, List<DeliveredResult> results) implements Message {
        public MessageType type() {
            return MessageType.DELIVER;
        }
    }

    /** One result; {@code seq} numbers an instance's results 1, 2, 3... for ACK and redelivery. */
    record DeliveredResult(long clientTaskId, long seq, int attempt, String executorId, long submittedMicros,
                           long dispatchedMicros, long completedMicros, Execution execution) {
    }

    record StatusRequest(long requestId, long instanceId) implements Message {
        public MessageType type() {
            return MessageType.STATUS_REQUEST;
        }
    }

    record Status(long requestId, String json) implements Message {
        public MessageType type() {
            return MessageType.STATUS;
        }
    }

    record Destroy(long requestId, long instanceId) implements Message {
        public MessageType type() {
            return MessageType.DESTROY;
        }
    }

    record Destroyed(long requestId, long instanceId, int cancelled) implements Message {
        public MessageType type() {
            return MessageType.DESTROYED;
        }
    }

    /**
     * HALT: start nothing more of the instance. Its tasks not yet dispatched end CANCELLED; those
     * running finish and deliver as usual; the instance stays (and refuses new tasks with
     * INVALID_TASK). What {@code falkon run --halt soon} sends.
     */
    record Halt(long requestId, long instanceId) implements Message {
        public MessageType type() {
            return MessageType.HALT;
        }
    }

    /** HALTED: how many tasks HALT cancelled (those running are not counted: they finish). */
    record Halted(long requestId, long instanceId, int cancelled) implements Message {
        public MessageType type() {
            return MessageType.HALTED;
        }
    }

    /**
     * CANCEL_TASKS: cancel some of the instance's tasks, by the ids the client gave them. Each one
     * unfinished ends CANCELLED (a running one is killed on its executor), and the tasks that need
     * it end as a cancelled producer's dependants do; finished and unknown ids are passed over. What
     * {@code falkon cancel INSTANCE --task N} sends.
     */
    record CancelTasks(long requestId, long instanceId, long[] clientTaskIds) implements Message {
        public MessageType type() {
            return MessageType.CANCEL_TASKS;
        }
    }

    /** TASKS_CANCELLED: how many of the ids CANCEL_TASKS named were unfinished, and are cancelled now. */
    record TasksCancelled(long requestId, long instanceId, int cancelled) implements Message {
        public MessageType type() {
            return MessageType.TASKS_CANCELLED;
        }
    }

    /**
     * ATTACH: take over an instance (after a reconnect, or from another client holding its secret)
     * and have its unacknowledged results redelivered.
     */
    record Attach(long requestId, long instanceId, String secret) implements Message {
        public MessageType type() {
            return MessageType.ATTACH;
        }
    }

    /**
     * ATTACHED: the highest client task id the instance has accepted (-1: none), and how many
     * unacknowledged results follow in DELIVER frames.
     */
    record Attached(long requestId, long instanceId, long highestClientTaskId, int redelivered) implements Message {
        public MessageType type() {
            return MessageType.ATTACHED;
        }
    }

    /**
     * ATTACH_MOVED: ATTACH from a client of several dispatchers that sent some of the instance's
     * tasks to other dispatchers while this one was away (failover): those still unfinished here are
     * cancelled in the same step, before anything of the instance can be dispatched again. Answered
     * with ATTACHED, as ATTACH is.
     */
    record AttachMoved(long requestId, long instanceId, String secret, long[] movedClientTaskIds) implements Message {
        public MessageType type() {
            return MessageType.ATTACH_MOVED;
        }
    }

    /** ACK: the client has every result of the instance up to and including {@code upToSeq}. */
    record Ack(long instanceId, long upToSeq) implements Message {
        public MessageType type() {
            return MessageType.ACK;
        }
    }
}
