package io.falkon.dispatcher.core;

import io.falkon.protocol.Message;

import java.util.ArrayList;
import java.util.List;

/** A client's instance (factory/instance pattern): its counters and undelivered results. */
final class Instance {
    final long id;
    final String name;
    final Link owner;
    final long createdMicros;
    int queued;
    int running;
    long completed;
    long succeeded;
    long cancelled;
    /** Results gathered during the current batch, sent as one DELIVER at its end. */
    List<Message.DeliveredResult> outbox;
    boolean inOutboxList;

    Instance(long id, String name, Link owner, long createdMicros) {
        this.id = id;
        this.name = name;
        this.owner = owner;
        this.createdMicros = createdMicros;
    }

    long failed() {
        return completed - succeeded;
    }
}
