package io.falkon.dispatcher.core;

import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpecCodec;

/**
 * What a transport hands the scheduler, whatever the transport: a client's request or an executor's
 * message (already authenticated and validated by the admission stage), or the end of a connection.
 * Data rather than a closure, so that the loop and the admission stage can inspect, log or refuse
 * it; {@link Scheduler#handle} carries it out.
 *
 * @param scans     for a SUBMIT, one validated scan per task; otherwise null
 * @param footprint for a SUBMIT, the heap its decoded tasks hold until the scheduler takes them
 *                  (bounded in {@link SchedulerLoop#offerBundle}); otherwise 0
 */
public record Event(Kind kind, Link link, Message message, TaskSpecCodec.Scan[] scans, long footprint) {

    public enum Kind {
        /** A client request ({@code CREATE_INSTANCE}, {@code SUBMIT}, {@code STATUS_REQUEST}, …). */
        CLIENT,
        /** An executor message ({@code REGISTER}, {@code CREDIT}, {@code RESULT}, {@code CACHE_UPDATE}). */
        EXECUTOR,
        /** A client connection ended. */
        CLIENT_GONE,
        /** An executor connection ended. */
        EXECUTOR_GONE
    }

    public static Event client(Link link, Message m) {
        return new Event(Kind.CLIENT, link, m, null, 0);
    }

    public static Event submit(Link link, Message.Submit m, TaskSpecCodec.Scan[] scans) {
        long bytes = 0;
        for (int i = 0; i < scans.length; i++) {
            bytes += Task.footprint(m.tasks().get(i).spec(), scans[i].inputIds());
        }
        return new Event(Kind.CLIENT, link, m, scans, bytes);
    }

    public static Event executor(Link link, Message m) {
        return new Event(Kind.EXECUTOR, link, m, null, 0);
    }

    public static Event gone(Link link, boolean executor) {
        return new Event(executor ? Kind.EXECUTOR_GONE : Kind.CLIENT_GONE, link, null, null, 0);
    }

    @Override
    public String toString() {
        return kind + (message == null ? "" : " " + message.type()) + " from " + link.remote();
    }
}
