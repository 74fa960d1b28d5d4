package io.falkon.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The {@link ExtTags#WORKER} field of a task: the command of the resident process that runs it, and
 * bytes handed to that process with the task (a pickled Python call, say). An executor starts the
 * command once per slot and keeps it for every task naming the same command and environment
 * ({@link WorkerFrames} is what it says to it).
 *
 * @param command the worker's program and arguments; {@code command.get(0)} is the program
 * @param payload opaque bytes for the worker, often empty
 */
public record PersistentWorker(List<String> command, byte[] payload) {

    /** Most words a worker command may have. */
    public static final int MAX_COMMAND_WORDS = 4096;

    public PersistentWorker {
        String problem = problem(command);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        command = List.copyOf(command);
        payload = payload.clone();
    }

    /** Why {@code command} cannot name a worker, or null. */
    public static String problem(List<String> command) {
        if (command == null || command.isEmpty()) {
            return "a worker command needs a program";
        }
        if (command.size() > MAX_COMMAND_WORDS) {
            return "a worker command has at most " + MAX_COMMAND_WORDS + " words, got " + command.size();
        }
        for (String word : command) {
            if (word == null) {
                return "a worker command holds a null word";
            }
        }
        if (command.get(0).isEmpty()) {
            return "a worker command's program is empty";
        }
        return null;
    }

    @Override
    public byte[] payload() {
        return payload.clone();
    }

    public ExtField toExt() {
        ByteBuf b = Unpooled.buffer();
        WireWriter.strList(b, command);
        WireWriter.blob(b, payload);
        byte[] v = new byte[b.readableBytes()];
        b.readBytes(v);
        return new ExtField(ExtTags.WORKER, v);
    }

    /** The worker named by an ext value; a malformed one is a {@link ProtocolException} naming the field. */
    public static PersistentWorker decode(byte[] value) {
        WireReader in = new WireReader(Unpooled.wrappedBuffer(value));
        List<String> command = in.strList("worker command");
        byte[] payload = in.blob("worker payload");
        in.end("worker");
        String problem = problem(command);
        if (problem != null) {
            throw new ProtocolException(ErrorCode.MALFORMED, "ext WORKER: " + problem);
        }
        return new PersistentWorker(command, payload);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PersistentWorker w && w.command.equals(command) && Arrays.equals(w.payload, payload);
    }

    @Override
    public int hashCode() {
        return Objects.hash(command, Arrays.hashCode(payload));
    }

    @Override
    public String toString() {
        return "PersistentWorker" + command + "[" + payload.length + " bytes]";
    }
}
