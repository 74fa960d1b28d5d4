package io.falkon.dispatcher.core;

import io.falkon.dispatcher.policy.ExecutorView;
import io.falkon.protocol.Message;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A registered executor: its connection, credits and the tasks it is running. */
final class ExecutorState implements ExecutorView {
    final Link link;
    final String id;
    final String host;
    final int slots;
    final boolean noExec;
    final long connectedMicros;
    int credits;
    /** Tasks dispatched to it whose results have not come back, by task id. */
    final Map<Long, Task> tasks = new HashMap<>();
    long completed;
    boolean alive = true;
    /** No work until then (epoch micros); 0 when not suspended. */
    long suspendedUntilMicros;
    long suspensions;
    long failures;
    final OutcomeWindow outcomes;
    /** Object ids its cache holds, per its reports (data diffusion). */
    final java.util.Set<String> cached = new java.util.HashSet<>();
    /** Its cache server as peers reach it, {@code host:port}, or null when it has none. */
    final String cachePeer;
    /** Whether it sits in the scheduler's ring of executors with credits. */
    boolean inRing;
    /** Tasks assigned in the current round, sent as one DISPATCH bundle at the end of it. */
    List<Message.DispatchedTask> bundle;

    ExecutorState(Link link, Message.Register reg, long nowMicros, long windowMicros) {
        this.outcomes = new OutcomeWindow(windowMicros);
        String port = reg.attributes().get("cachePort");
        String host = reg.attributes().getOrDefault("cacheHost", link.remoteHost());
        this.cachePeer = port == null ? null : host + ":" + port;
        this.link = link;
        this.id = reg.executorId();
        this.host = reg.host();
        this.slots = reg.slots();
        this.noExec = reg.noExec();
        this.connectedMicros = nowMicros;
    }

    boolean suspended() {
        return suspendedUntilMicros != 0;
    }

    /** Whether the dispatcher may send it work now. */
    boolean eligible() {
        return alive && suspendedUntilMicros == 0;
    }

    void addToBundle(Message.DispatchedTask t) {
        if (bundle == null) {
            bundle = new ArrayList<>(Math.min(credits + 1, 1024));
        }
        bundle.add(t);
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public String host() {
        return host;
    }

    @Override
    public int slots() {
        return slots;
    }

    @Override
    public int credits() {
        return credits;
    }

    @Override
    public int running() {
        return tasks.size();
    }
}
